package kuberay

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

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
// Python versions, deadline, autoscaling, an existing cluster. Each run
// names its own RayJob (RunOptions.SubmissionID) and each application its
// RayService (the plan's name), and Apply and Deploy pack each plan's own
// working_dir. Every invalid field is reported at once (see CheckOptions).
func WithOptions(o Options) Option {
	return optionFunc(func(b *Backend) error {
		if errs := o.validate(field.NewPath("options")); len(errs) > 0 {
			return fmt.Errorf("kuberay: WithOptions: %w", errs)
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

// Options are how a Backend renders and runs every plan it is given:
// where, with which image, how long, autoscaled or on an existing
// RayCluster. What differs per rendered object (its name, its packed
// working_dir) is a RenderInput. The zero value is valid. The json names
// are the paths of errors below the root "options" (options.autoscaling.
// minSlices).
type Options struct {
	// Namespace of every object. Default: "default" (for New, the
	// kubeconfig's namespace is the caller's to pass).
	Namespace string `json:"namespace,omitempty"`
	// Image runs every Ray container; when set it wins over the defaults,
	// ImageRepository:<RayVersion>-py<PythonVersion without the dot> for
	// the head (rayproject/ray:2.60.0-py311) and the same with -tpu for
	// TPU workers. An OCI image reference:
	// [registry/]repository[:tag][@digest].
	Image string `json:"image,omitempty"`
	// RayVersion and PythonVersion pick the default images and
	// spec.rayClusterSpec.rayVersion: a Ray release x.y.z (2.60.0,
	// 2.61.0rc1) and a Python 3 minor version Ray 2.60 ships for (3.10
	// to 3.14). Default: RayVersion, PythonVersion.
	RayVersion    string `json:"rayVersion,omitempty"`
	PythonVersion string `json:"pythonVersion,omitempty"`
	// ActiveDeadline bounds a whole RayJob; KubeRay fails it when the
	// deadline passes. It is rounded to whole seconds (at least 1). 0:
	// none. RayServices and RayClusters have no deadline and ignore it.
	ActiveDeadline time.Duration `json:"activeDeadline,omitempty"`
	// Autoscaling, when set, renders Ray's autoscaler and lets it scale
	// the TPU worker groups between their bounds; nil renders fixed
	// replicas, the plan's slices.
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	// Cluster, when set, runs each RayJob on the existing RayCluster of
	// that name in Namespace (spec.clusterSelector) instead of creating
	// one: its worker groups must hold the plan's slices, or its
	// autoscaler add them. Autoscaling must be unset; a packed working_dir
	// reaches the cluster through the submitter pod (see
	// clusterSelectorKey). Only jobs run on an existing cluster: a Serve
	// application's RayService and a slice plan's RayCluster make their
	// own. Optional.
	Cluster string `json:"cluster,omitempty"`
	// Capacity is where every TPU worker group's nodes come from on GKE:
	// on-demand, Spot VMs, a specific reservation or flex-start, rendered
	// as GKE's node selectors and tolerations on the TPU workers (never on
	// the CPU head). A plan's own capacity (placement.Plan.Capacity) is
	// used when this is the zero value, and must equal it otherwise.
	// Default: on-demand. Not with Cluster: an existing RayCluster's
	// worker groups say where their nodes come from.
	Capacity placement.Capacity `json:"capacity,omitzero"`
	// Queue, when set, is the Kueue LocalQueue of Namespace that each
	// RayJob and RayCluster waits in for its ClusterQueue's quota: label
	// kueue.x-k8s.io/queue-name on the object, created suspended
	// (spec.suspend: true) for Kueue to resume once it admits all of its
	// pods. A label value that names a LocalQueue (team-a). Kueue refuses
	// Ray's autoscaler and an existing cluster beside it, so Autoscaling
	// and Cluster must be unset; a Serve application's RayService cannot
	// be queued (Kueue v0.17 queues RayServices only with KubeRay v1.6's
	// types). Optional.
	Queue string `json:"queue,omitempty"`
	// PackageBucket, when set, is where a local working_dir (with
	// raytpu's launcher files) goes instead of a ConfigMap, which holds
	// at most 1 MiB: a Cloud Storage bucket, gs://bucket or
	// gs://bucket/prefix. Apply, Deploy and Manifests.Upload upload the
	// zip there as gs://bucket[/prefix]/_ray_pkg_<hash>.zip, named by
	// Ray's content hash of the files as Ray names its packages, unless
	// an object of that name is there already (a retry, or the same files
	// shipped before), and Ray's runtime_env fetches it on every node.
	// The upload finds Google credentials as every Google client does
	// (Application Default Credentials; STORAGE_EMULATOR_HOST for an
	// emulator); the cluster's pods read the object with their own (on
	// GKE, Workload Identity). Optional. Default: ConfigMaps.
	PackageBucket string `json:"packageBucket,omitempty"`
}

// RenderInput is what differs between two objects Render renders with the
// same Options: today the object's name (a Backend names each RayJob by
// its run and each RayService and RayCluster by its plan). The zero value
// is valid. The json names are the paths of errors below the root
// "input".
type RenderInput struct {
	// Name of the object: a DNS-1035 label of at most MaxRayJobName
	// (MaxRayServiceName, MaxRayClusterName) characters. Default:
	// NameFor(the plan's name).
	Name string `json:"name,omitempty"`
}

// settings are Options with one object's input: what every render
// function takes.
type settings struct {
	Options
	Name       string
	WorkingDir *WorkingDir
}

func (o settings) withDefaults(p *placement.Plan) settings {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Name == "" {
		o.Name = NameFor(p.Name)
	}
	if o.RayVersion == "" {
		o.RayVersion = RayVersion
	}
	if o.PythonVersion == "" {
		o.PythonVersion = PythonVersion
	}
	if o.Capacity == (placement.Capacity{}) {
		o.Capacity = p.Capacity
	}
	return o
}

var (
	rayVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+((rc|a|b|\.dev|\.post)[0-9]+)?$`)
	// imageRE is an OCI image reference (distribution/reference's grammar,
	// lower-case repository, optional tag and digest).
	imageRE = regexp.MustCompile(`^(([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]+)?/)?` +
		`[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*` +
		`(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@[a-z0-9]+([+._-][a-z0-9]+)*:[a-fA-F0-9]{32,})?$`)
)

// pythonVersions are the Python versions Ray 2.60, the release raytpu
// follows, ships for (its wheels on PyPI are for CPython 3.10 to 3.14;
// 3.9 has none), and so the -pyNNN tags its images can have.
var pythonVersions = []string{"3.10", "3.11", "3.12", "3.13", "3.14"}

// CheckOptions reports every field of o that a Backend or Render cannot
// use, as a field.ErrorList with paths below "options": a Namespace that
// is not a DNS-1123 label, a negative ActiveDeadline, an Image that is not
// an OCI reference, a RayVersion that is not a Ray release (2.60.0,
// 2.61.0rc1), a PythonVersion Ray ships no image for, a Cluster that is
// no RayCluster name or comes with Autoscaling or Capacity, a Capacity
// placement.Capacity.Validate refuses (Spot with a reservation), or
// Autoscaling bounds,
// timeout, mode or version KubeRay would refuse. It is the check New
// (WithOptions) and every Render make first, so Render refuses no options
// CheckOptions accepts, except those only a plan can refute (a MaxSlices
// below the slices a plan needs, a group the plan does not render, a
// Cluster for a plan that is not a job). The zero Options is valid.
func CheckOptions(o Options) error {
	return o.validate(field.NewPath("options")).Err()
}

// validate holds every rule of Options that needs no plan.
func (o Options) validate(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range namespaceErrors(o.Namespace) {
		errs = append(errs, field.Invalid(root.Child("namespace"), o.Namespace, m))
	}
	if o.ActiveDeadline < 0 {
		errs = append(errs, field.Invalid(root.Child("activeDeadline"), o.ActiveDeadline.String(), "must be positive, or 0 for no deadline"))
	} else if o.ActiveDeadline.Round(time.Second)/time.Second > math.MaxInt32 {
		errs = append(errs, field.Invalid(root.Child("activeDeadline"), o.ActiveDeadline.String(), fmt.Sprintf("at most %d seconds (int32)", math.MaxInt32)))
	}
	if o.Image != "" {
		if msg := imageError(o.Image); msg != "" {
			errs = append(errs, field.Invalid(root.Child("image"), o.Image, msg+" (e.g. "+defaultTPUImage(RayVersion, PythonVersion)+")"))
		}
	}
	if o.RayVersion != "" && (len(o.RayVersion) > 32 || !rayVersionRE.MatchString(o.RayVersion)) {
		errs = append(errs, field.Invalid(root.Child("rayVersion"), o.RayVersion, "a Ray release such as "+RayVersion+", or empty for "+RayVersion))
	}
	if o.PythonVersion != "" && !slices.Contains(pythonVersions, o.PythonVersion) {
		errs = append(errs, field.NotSupported(root.Child("pythonVersion"), o.PythonVersion, pythonVersions).
			WithDetail("a Python version Ray publishes rayproject/ray images for, or empty for "+PythonVersion))
	}
	if o.PackageBucket != "" {
		if _, _, err := splitBucket(o.PackageBucket); err != nil {
			errs = append(errs, field.Invalid(root.Child("packageBucket"), o.PackageBucket, err.Error()))
		}
	}
	if o.Cluster != "" {
		if err := CheckName(o.Cluster, MaxRayClusterName); err != nil {
			errs = append(errs, field.Invalid(root.Child("cluster"), o.Cluster, "the name of a RayCluster: "+err.Error()))
		}
		if o.Autoscaling != nil {
			errs = append(errs, field.Forbidden(root.Child("autoscaling"),
				"a RayJob on an existing cluster (options.cluster) scales nothing: the RayCluster's own spec says whether its autoscaler runs"))
		}
		if o.Capacity != (placement.Capacity{}) {
			errs = append(errs, field.Forbidden(root.Child("capacity"),
				"a RayJob on an existing cluster (options.cluster) provisions nothing: the RayCluster's own worker groups say where their nodes come from"))
		}
	}
	errs = append(errs, o.Capacity.Validate(root.Child("capacity"))...)
	errs = append(errs, checkAutoscaling(o.Autoscaling, root.Child("autoscaling"))...)
	errs = append(errs, o.queueErrors(root)...)
	return errs
}

// validate checks the options and the input of one render, as Render
// reports them.
func (o settings) validate() field.ErrorList {
	errs := o.Options.validate(field.NewPath("options"))
	return append(errs, RenderInput{Name: o.Name}.validate(field.NewPath("input"))...)
}

// validate holds every rule of a RenderInput that needs no plan.
func (in RenderInput) validate(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.ContainsFunc(in.Name, isControl) {
		errs = append(errs, field.Invalid(root.Child("name"), in.Name, "a name has no control characters"))
	}
	return errs
}

// imageError says what is wrong with image as an OCI image reference, ""
// when nothing is.
func imageError(image string) string {
	switch {
	case strings.ContainsFunc(image, isControl):
		return "an image reference has no control characters"
	case strings.ContainsFunc(image, unicode.IsSpace):
		return "an image reference has no white space"
	case len(image) > 255+128+80:
		return "an image reference of at most 463 characters"
	case !imageRE.MatchString(image):
		return "an OCI image reference, [registry/]repository[:tag][@digest] with a lower-case repository"
	}
	return ""
}

func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar
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
