package kuberay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// Name is the name the backend gives itself in a backend.Outcome.
const Name = "kuberay"

// errNilBackend is the error of every method called on a nil *Backend,
// and errZeroBackend of one called on a Backend not made by New or
// NewWithClient; both match backend.ErrNilBackend.
var (
	errNilBackend  = fmt.Errorf("kuberay: nil *Backend: make one with kuberay.New or kuberay.NewWithClient: %w", backend.ErrNilBackend)
	errZeroBackend = fmt.Errorf("kuberay: *Backend not made by New or NewWithClient (a zero Backend): make one with kuberay.New or kuberay.NewWithClient: %w", backend.ErrNilBackend)
)

// usable is the error of a call on a nil *Backend, on one not made by New
// or NewWithClient, or with a nil context.
func (b *Backend) usable(ctx context.Context) error {
	if b == nil {
		return errNilBackend
	}
	if b.client == nil || b.logger == nil {
		return errZeroBackend
	}
	if ctx == nil {
		return errors.New("kuberay: nil context.Context: pass context.Background() or a request's context")
	}
	return nil
}

// Backend runs plans as KubeRay RayJobs in one namespace. It is safe for
// concurrent use. A Backend is made by New or NewWithClient: every method
// of a nil *Backend, or of one not made by them (a zero Backend,
// new(Backend)), returns an error matching backend.ErrNilBackend that says
// so, and does nothing.
type Backend struct {
	client rayclient.Interface
	// kube writes ConfigMaps (a packed working_dir); nil with
	// NewWithClient unless WithKubeClient.
	kube kubernetes.Interface
	// dyn reads Kueue's objects (why a queued RayJob waits); nil with
	// NewWithClient.
	dyn    dynamic.Interface
	dryRun bool
	opts   Options
	logger *slog.Logger
	// check, when set, is asked before a RayJob is created on an existing
	// cluster (WithClusterCheck).
	check ClusterCheck
}

var _ backend.Runner = (*Backend)(nil)

// New returns a backend that reaches the cluster through cfg.
func New(cfg *rest.Config, opts ...Option) (*Backend, error) {
	return newAnswering(cfg, answerTimeout, opts...)
}

// newAnswering is New whose requests fail when the apiserver has not begun
// to answer within d.
func newAnswering(cfg *rest.Config, d time.Duration, opts ...Option) (*Backend, error) {
	if cfg == nil {
		return nil, errors.New("kuberay: New(nil): pass a *rest.Config, such as LoadConfig's")
	}
	cfg = withAnswerTimeout(cfg, d)
	c, err := rayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kuberay: KubeRay client: %w", err)
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kuberay: Kubernetes client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kuberay: dynamic client: %w", err)
	}
	b, err := NewWithClient(c, append([]Option{WithKubeClient(k)}, opts...)...)
	if err != nil {
		return nil, err
	}
	b.dyn = dc
	return b, nil
}

// NewWithClient returns a backend on an existing KubeRay clientset, or the
// error of the first invalid option.
func NewWithClient(c rayclient.Interface, opts ...Option) (*Backend, error) {
	if c == nil {
		return nil, errors.New("kuberay: NewWithClient(nil): a KubeRay clientset is required")
	}
	b := &Backend{client: c, logger: slog.New(slog.DiscardHandler)}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("kuberay: nil Option (option %d): pass WithOptions, WithLogger, ... or leave it out", i)
		}
		if err := o.apply(b); err != nil {
			return nil, err
		}
	}
	if b.opts.Namespace == "" {
		b.opts.Namespace = DefaultNamespace
	}
	return b, nil
}

// Run applies the plan's RayJob under opts.SubmissionID (default: a new
// name from the plan's), follows it until KubeRay reports it Complete or
// Failed, and returns the outcome; a RayJob that fails returns the outcome
// and a *backend.RunError. Run with the SubmissionID of a RayJob already
// applied for the same plan follows that RayJob. The outcome's Output is
// the launcher's result from the submitter pod's log; opts.Logs is not
// written yet.
func (b *Backend) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	name := opts.SubmissionID
	if name == "" && p != nil {
		name = newName(p.Name)
	}
	if _, err := b.Apply(ctx, p, name); err != nil {
		return nil, err
	}
	return b.WaitJob(ctx, name, opts)
}

// Apply renders the plan as RayJob name and server-side applies it with
// field manager "raytpu". Applying the same plan under the same name again
// changes nothing (the RayJob is not sent again); a RayJob of that name that runs another plan (its
// raytpu.dev/plan-digest annotation differs) is an error matching
// ErrAlreadyExists, and is left alone. The plan is checked first
// (backend.CheckPlan): a plan that does not run to completion is
// backend.ErrUnsupported, a malformed one a *backend.InvalidPlanError, and
// neither is packed or sent.
//
// A local working_dir is packed (packJobWorkingDir: with the runtime_env's
// excludes, and the launcher's files) into ConfigMap
// workingDirConfigMapName(name), owned by the RayJob, which mounts it; see
// WorkingDirMountPath. A plan that runs raytpu's launcher without a
// working_dir gets one holding the launcher's files (shipsWorkingDir).
func (b *Backend) Apply(ctx context.Context, p *placement.Plan, name string) (*rayv1.RayJob, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if err := backend.CheckPlan(Name, p, backend.RunKinds()...); err != nil {
		return nil, err
	}
	// Before anything is packed, uploaded or created.
	if err := checkStorage(p); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == "" {
		name = NameFor(p.Name)
	}
	o := settings{Options: b.opts, Name: name}
	if isLocal(p.Job.RuntimeEnv.WorkingDir) && b.kube == nil && o.PackageBucket == "" {
		return nil, fmt.Errorf("kuberay: %w: plan %q has a local working_dir and the backend has no Kubernetes client to write its ConfigMap (use New or WithKubeClient)", ErrLocalWorkingDir, p.Name)
	}
	if shipsWorkingDir(p) && o.PackageBucket != "" {
		wd, err := packJobForBucket(p, o.PackageBucket)
		if err != nil {
			return nil, err
		}
		if _, err := wd.upload(ctx); err != nil {
			return nil, err
		}
		o.WorkingDir = wd
	} else if shipsWorkingDir(p) && b.kube != nil {
		pack := packJobWorkingDir
		if o.Cluster != "" {
			pack = packSubmittedWorkingDir
		}
		wd, err := pack(p)
		if err != nil {
			return nil, err
		}
		o.WorkingDir = wd
	}
	job, err := renderJob(p, o)
	if err != nil {
		return nil, err
	}
	digest := job.Annotations[AnnotationPlanDigest]
	jobs := b.client.RayV1().RayJobs(o.Namespace)
	cur, err := jobs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("kuberay: reading RayJob %s/%s: %w", o.Namespace, name, err)
	case cur.Annotations[AnnotationPlanDigest] != digest:
		return nil, fmt.Errorf("kuberay: RayJob %s/%s: %w (digest %q, want %q); choose another submission id",
			o.Namespace, name, backend.ErrAlreadyExists, cur.Annotations[AnnotationPlanDigest], digest)
	}
	out := cur
	if apierrors.IsNotFound(err) {
		if err := b.checkCluster(ctx, p, o.Cluster); err != nil {
			return nil, err
		}
		out, err = jobs.Apply(ctx, job, b.applyOptions())
		if err != nil {
			return nil, applyError(KindRayJob, o.Namespace, name, err)
		}
	} else {
		// Not applied again: KubeRay's own Update of the RayJob (its
		// finalizer) re-encodes the atomic workerGroupSpecs list, which
		// makes the operator that list's owner and a second apply a
		// conflict.
		b.logger.DebugContext(ctx, "kuberay: the RayJob exists for this plan", "rayjob", name)
	}
	if o.WorkingDir != nil && o.WorkingDir.remote == "" {
		// Pods that mount a ConfigMap not yet written wait for it.
		owner := metav1ac.OwnerReference().WithAPIVersion(rayv1.GroupVersion.String()).WithKind(KindRayJob).
			WithName(out.Name).WithUID(out.UID)
		cm := workingDirConfigMap(name, o.Namespace, o.WorkingDir, labels(p), owner)
		if _, err := b.kube.CoreV1().ConfigMaps(o.Namespace).Apply(ctx, cm, b.applyOptions()); err != nil {
			return nil, fmt.Errorf("kuberay: applying the working_dir ConfigMap %s/%s of RayJob %s: %w", o.Namespace, deref(cm.Name), name, err)
		}
	}
	return out, nil
}

// checkCluster asks the backend's ClusterCheck, if any, whether the
// existing RayCluster cluster can run p; no cluster, no check.
func (b *Backend) checkCluster(ctx context.Context, p *placement.Plan, cluster string) error {
	if b.check == nil || cluster == "" {
		return nil
	}
	cs, err := b.ReadClusterSlices(ctx, cluster)
	if err != nil {
		return err
	}
	if err := b.check(cs, p); err != nil {
		return fmt.Errorf("kuberay: RayCluster %s/%s cannot run plan %q: %w", cs.Namespace, cs.Name, p.Name, err)
	}
	return nil
}
