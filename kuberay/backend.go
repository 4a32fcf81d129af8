package kuberay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// Name is the name the backend gives itself in a backend.Outcome.
const Name = "kuberay"

// ErrAlreadyExists means the RayJob name is taken by a RayJob that runs
// another plan.
var ErrAlreadyExists = errors.New("a RayJob of that name runs another plan")

// Backend runs plans as KubeRay RayJobs in one namespace. It is safe for
// concurrent use.
type Backend struct {
	client rayclient.Interface
	opts   Options
	logger *slog.Logger
}

var _ backend.Runner = (*Backend)(nil)

// Option configures a Backend.
type Option func(*Backend)

// WithOptions sets how plans are rendered (namespace, image, Ray
// version, deadline); Options.Name is ignored, as each run names its own.
func WithOptions(o Options) Option { return func(b *Backend) { b.opts = o } }

// WithLogger sets the logger for the backend's debug events. Default: silent.
func WithLogger(l *slog.Logger) Option {
	return func(b *Backend) {
		if l != nil {
			b.logger = l
		}
	}
}

// New returns a backend that reaches the cluster through cfg.
func New(cfg *rest.Config, opts ...Option) (*Backend, error) {
	c, err := rayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kuberay: KubeRay client: %w", err)
	}
	return NewWithClient(c, opts...), nil
}

// NewWithClient returns a backend on an existing KubeRay clientset.
func NewWithClient(c rayclient.Interface, opts ...Option) *Backend {
	b := &Backend{client: c, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(b)
	}
	if b.opts.Namespace == "" {
		b.opts.Namespace = DefaultNamespace
	}
	return b
}

// Run applies the plan's RayJob under opts.SubmissionID (default: a new
// name from the plan's), follows it until KubeRay reports it Complete or
// Failed, and returns the outcome; a RayJob that fails returns the outcome
// and a *backend.RunError. Run with the SubmissionID of a RayJob already
// applied for the same plan follows that RayJob. opts.Logs is not written
// yet: the backend reads no job logs.
func (b *Backend) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	name := opts.SubmissionID
	if name == "" && p != nil {
		name = NewName(p.Name)
	}
	if _, err := b.Apply(ctx, p, name); err != nil {
		return nil, err
	}
	return b.WaitJob(ctx, name, opts)
}

// Apply renders the plan as RayJob name and server-side applies it with
// field manager "raytpu". Applying the same plan under the same name again
// changes nothing; a RayJob of that name that runs another plan (its
// raytpu.dev/plan-digest annotation differs) is an error matching
// ErrAlreadyExists, and is left alone.
func (b *Backend) Apply(ctx context.Context, p *placement.Plan, name string) (*rayv1.RayJob, error) {
	o := b.opts
	o.Name = name
	job, err := Render(p, o)
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
			o.Namespace, name, ErrAlreadyExists, cur.Annotations[AnnotationPlanDigest], digest)
	default:
		b.logger.DebugContext(ctx, "kuberay: the RayJob exists for this plan; applying again", "rayjob", name)
	}
	out, err := jobs.Apply(ctx, job, metav1.ApplyOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("kuberay: applying RayJob %s/%s: %w", o.Namespace, name, err)
	}
	return out, nil
}
