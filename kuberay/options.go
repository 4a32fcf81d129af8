package kuberay

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// An Option configures a Backend. Options validate their input; New and
// NewWithClient return the first invalid one's error, which names the
// option, the bad value and what is valid.
type Option interface {
	apply(*Backend) error
}

type optionFunc func(*Backend) error

func (f optionFunc) apply(b *Backend) error { return f(b) }

// WithOptions sets how plans are rendered: namespace, image, Ray and
// Python versions, deadline. Options.Name and Options.WorkingDir must be
// empty: each run names its own RayJob (RunOptions.SubmissionID) and each
// application its RayService (the plan's name), and Apply and Deploy pack
// each plan's own working_dir. Every invalid field is reported at once
// (see CheckOptions).
func WithOptions(o Options) Option {
	return optionFunc(func(b *Backend) error {
		if err := CheckOptions(o); err != nil {
			return fmt.Errorf("kuberay: WithOptions: %w", err)
		}
		b.opts = o
		return nil
	})
}

// WithLogger sets the logger for the backend's debug events. Default: silent.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(b *Backend) error {
		if l == nil {
			return errors.New("kuberay: WithLogger(nil): pass a logger, or no option for a silent backend")
		}
		b.logger = l
		return nil
	})
}

// WithDryRun makes every apply a server-side dry run: the apiserver
// validates and defaults the objects (CRD schema, admission) and returns
// them, and stores nothing. Reads and deletes are unaffected.
func WithDryRun() Option {
	return optionFunc(func(b *Backend) error {
		b.dryRun = true
		return nil
	})
}

// ClusterCheck decides whether the existing RayCluster cs can run plan p:
// nil, or an error saying why not. kubesim.Check is the simulator's
// prediction of Ray's autoscaler, the check `raytpu apply --ray-cluster`
// runs.
type ClusterCheck func(cs *ClusterSlices, p *placement.Plan) error

// WithClusterCheck makes Apply (and Run) on an existing RayCluster
// (Options.Cluster) read the cluster's TPU worker groups
// (ReadClusterSlices) and ask check before it creates the RayJob: a plan
// check refuses is an error wrapping check's, and nothing is packed or
// sent. A RayJob that already exists for the plan is followed without a
// check, so a retried Run does not depend on the cluster's slices of the
// moment. Without the option Apply checks nothing: a job the cluster
// cannot give its slices waits with its slice reservation pending.
func WithClusterCheck(check ClusterCheck) Option {
	return optionFunc(func(b *Backend) error {
		if check == nil {
			return errors.New("kuberay: WithClusterCheck(nil): pass a check such as kubesim.Check, or no option")
		}
		b.check = check
		return nil
	})
}

// WithKubeClient sets the Kubernetes clientset the backend writes
// ConfigMaps with (a job's packed local working_dir). Default: one made
// from the rest.Config given to New; none with NewWithClient.
func WithKubeClient(k kubernetes.Interface) Option {
	return optionFunc(func(b *Backend) error {
		if k == nil {
			return errors.New("kuberay: WithKubeClient(nil): pass a clientset, or no option (New makes one from its rest.Config)")
		}
		b.kube = k
		return nil
	})
}

var (
	rayVersionRE    = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+[a-z0-9.]*$`)
	pythonVersionRE = regexp.MustCompile(`^3\.[0-9]+$`)
)

// CheckOptions reports every field of o that a Backend cannot use, as a
// field.ErrorList with paths below "Options": a Name or WorkingDir (set
// per run, see WithOptions), a Namespace that is not a DNS-1123 label, a
// negative ActiveDeadline, an Image with white space, a RayVersion that is
// not a Ray release (2.60.0, 2.61.0rc1) or a PythonVersion that is not
// 3.<minor>, or Autoscaling bounds, timeout, mode or version KubeRay
// would refuse. The zero Options is valid.
func CheckOptions(o Options) error {
	root := field.NewPath("Options")
	var errs field.ErrorList
	if o.Name != "" {
		errs = append(errs, field.Forbidden(root.Child("Name"), fmt.Sprintf(
			"%q: each run names its own RayJob (RunOptions.SubmissionID) and each application its RayService (the plan's name); leave it empty", o.Name)))
	}
	if o.WorkingDir != nil {
		errs = append(errs, field.Forbidden(root.Child("WorkingDir"), "the backend packs each plan's own working_dir; leave it empty"))
	}
	for _, m := range namespaceErrors(o.Namespace) {
		errs = append(errs, field.Invalid(root.Child("Namespace"), o.Namespace, m))
	}
	if o.ActiveDeadline < 0 {
		errs = append(errs, field.Invalid(root.Child("ActiveDeadline"), o.ActiveDeadline.String(), "must be positive, or 0 for no deadline"))
	}
	if strings.ContainsFunc(o.Image, func(r rune) bool { return r <= ' ' }) {
		errs = append(errs, field.Invalid(root.Child("Image"), o.Image, "an image reference has no white space (e.g. "+DefaultTPUImage(RayVersion, PythonVersion)+")"))
	}
	if o.RayVersion != "" && !rayVersionRE.MatchString(o.RayVersion) {
		errs = append(errs, field.Invalid(root.Child("RayVersion"), o.RayVersion, "a Ray release such as "+RayVersion+", or empty for "+RayVersion))
	}
	if o.PythonVersion != "" && !pythonVersionRE.MatchString(o.PythonVersion) {
		errs = append(errs, field.Invalid(root.Child("PythonVersion"), o.PythonVersion, "a Python version such as "+PythonVersion+", or empty for "+PythonVersion))
	}
	errs = append(errs, checkAutoscaling(o.Autoscaling, root.Child("Autoscaling"))...)
	return errs.Err()
}

// namespaceErrors says what is wrong with ns as a namespace (a DNS-1123
// label); nothing for a valid or empty one.
func namespaceErrors(ns string) []string {
	if ns == "" {
		return nil
	}
	var msgs []string
	for _, m := range validation.IsDNS1123Label(ns) {
		msgs = append(msgs, "a DNS-1123 label: "+m)
	}
	return msgs
}
