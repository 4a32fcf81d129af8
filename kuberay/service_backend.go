package kuberay

import (
	"context"
	"errors"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// ErrNotManaged means an object of the name exists but raytpu did not
// create it (it lacks the app.kubernetes.io/managed-by=raytpu label), so
// raytpu leaves it alone.
var ErrNotManaged = errors.New("the object was not created by raytpu")

var _ backend.Server = (*Backend)(nil)

// Deploy renders the Serve plan as RayService NameFor(p.Name) and
// server-side applies it with field manager "raytpu". Deploying the same
// plan again changes nothing; deploying a changed plan updates the
// RayService, which KubeRay rolls out as it decides: a change of
// serveConfigV2 alone is submitted to the running RayCluster in place, a
// change of the cluster spec (other than replicas or added worker groups)
// prepares a new RayCluster and switches over once it serves. A RayService
// of that name that raytpu did not create is left alone: an error matching
// ErrNotManaged and backend.ErrAlreadyExists (the name is taken). The plan
// is checked first (backend.CheckPlan): a plan that is not an application
// is backend.ErrUnsupported, a malformed one a *backend.InvalidPlanError,
// and neither is packed or sent.
func (b *Backend) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if err := backend.CheckPlan(Name, p, placement.KindApplication); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := settings{Options: b.opts, Name: NameFor(p.Name)}
	if needsReplicaRuntime(p) && b.kube == nil {
		return nil, fmt.Errorf("kuberay: %w: application %q has deployments that own TPU slices, whose replica runtime travels in a ConfigMap, and the backend has no Kubernetes client to write it (use New or WithKubeClient)", backend.ErrUnsupported, p.Name)
	}
	if env := p.Serve.Config.RuntimeEnv; env != nil && isLocal(env.WorkingDir) {
		if b.kube == nil && o.PackageBucket == "" {
			return nil, fmt.Errorf("kuberay: %w: application %q has a local working_dir and the backend has no Kubernetes client to write its ConfigMap (use New or WithKubeClient)", ErrLocalWorkingDir, p.Name)
		}
		wd, err := packServiceWorkingDir(env.WorkingDir, env.Excludes, o.PackageBucket)
		if err != nil {
			return nil, err
		}
		if o.PackageBucket != "" {
			if _, err := wd.upload(ctx); err != nil {
				return nil, err
			}
		}
		o.WorkingDir = wd
	}
	svc, err := renderService(p, o)
	if err != nil {
		return nil, err
	}
	name := deref(svc.Name)
	svcs := b.client.RayV1().RayServices(o.Namespace)
	cur, err := svcs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("kuberay: reading RayService %s/%s: %w", o.Namespace, name, err)
	case cur.Labels[LabelManagedBy] != FieldManager:
		return nil, fmt.Errorf("kuberay: RayService %s/%s: %w: %w (label %s=%q); choose another application name", o.Namespace, name, backend.ErrAlreadyExists, ErrNotManaged, LabelManagedBy, cur.Labels[LabelManagedBy])
	case cur.Annotations[AnnotationPlanDigest] == svc.Annotations[AnnotationPlanDigest]:
		// The same plan: nothing to send (see Apply) but a ConfigMap a
		// failed Deploy may not have written.
		if err := b.applyServiceFiles(ctx, cur, o.WorkingDir, p); err != nil {
			return nil, err
		}
		return serviceStatusOf(cur), nil
	}
	out, err := svcs.Apply(ctx, svc, b.applyOptions())
	if err != nil {
		return nil, applyError(KindRayService, o.Namespace, name, err)
	}
	if err := b.applyServiceFiles(ctx, out, o.WorkingDir, p); err != nil {
		return nil, err
	}
	b.logger.DebugContext(ctx, "kuberay: applied RayService", "rayservice", name, "generation", out.Generation)
	return serviceStatusOf(out), nil
}

// Status reads RayService NameFor(name); an error matching
// backend.ErrNotFound when there is none.
func (b *Backend) Status(ctx context.Context, name string) (*backend.ServiceStatus, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	ns, n := b.opts.Namespace, NameFor(name)
	svc, err := b.client.RayV1().RayServices(ns).Get(ctx, n, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("kuberay: RayService %s/%s: %w", ns, n, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("kuberay: reading RayService %s/%s: %w", ns, n, err)
	}
	return serviceStatusOf(svc), nil
}

// Wait watches RayService NameFor(name) until KubeRay reports it
// Ready (RUNNING). A RayService that failed (DEPLOY_FAILED, UNHEALTHY) is
// a *backend.ServiceError; so is a ctx that ends first, holding the last
// status seen.
func (b *Backend) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	ns, n := b.opts.Namespace, NameFor(name)
	if _, err := b.Status(ctx, name); err != nil {
		return nil, err
	}
	lw := cache.NewListWatchFromClient(b.client.RayV1().RESTClient(), "rayservices", ns, fields.OneTermEqualSelector("metadata.name", n))
	var last *backend.ServiceStatus
	_, err := watchtools.UntilWithSync(ctx, lw, &rayv1.RayService{}, nil, func(ev watch.Event) (bool, error) {
		svc, ok := ev.Object.(*rayv1.RayService)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("kuberay: RayService %s/%s was deleted: %w", ns, n, backend.ErrNotFound)
		}
		st := serviceStatusOf(svc)
		if last == nil || st.State != last.State || st.Message != last.Message {
			last = st
			b.logger.DebugContext(ctx, "kuberay: RayService status", "rayservice", n, "state", st.State, "message", st.Message)
			if opts.OnStatus != nil {
				opts.OnStatus(st)
			}
		}
		switch st.State {
		case backend.ServiceRunning, backend.ServiceDeployFailed, backend.ServiceUnhealthy:
			return true, nil
		}
		return false, nil
	})
	switch {
	case err != nil && last != nil && ctx.Err() != nil:
		return last, &backend.ServiceError{Status: b.withEvents(ctx, last, KindRayService, n), Err: ctx.Err()}
	case err != nil:
		return last, fmt.Errorf("kuberay: following RayService %s/%s: %w", ns, n, err)
	case last.State != backend.ServiceRunning:
		return last, &backend.ServiceError{Status: b.withEvents(ctx, last, KindRayService, n)}
	}
	return last, nil
}

// Delete deletes RayService NameFor(name), which raytpu created;
// KubeRay's RayClusters of the RayService and their pods are owned by it
// and go with it (Kubernetes' garbage collector deletes them). A RayService
// raytpu did not create is left alone (ErrNotManaged); none of that name
// matches backend.ErrNotFound.
func (b *Backend) Delete(ctx context.Context, name string) error {
	if err := b.usable(ctx); err != nil {
		return err
	}
	ns, n := b.opts.Namespace, NameFor(name)
	svcs := b.client.RayV1().RayServices(ns)
	svc, err := svcs.Get(ctx, n, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("kuberay: RayService %s/%s: %w", ns, n, backend.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("kuberay: reading RayService %s/%s: %w", ns, n, err)
	}
	if svc.Labels[LabelManagedBy] != FieldManager {
		return fmt.Errorf("kuberay: RayService %s/%s: %w (label %s=%q)", ns, n, ErrNotManaged, LabelManagedBy, svc.Labels[LabelManagedBy])
	}
	err = svcs.Delete(ctx, n, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(svc.UID))})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("kuberay: RayService %s/%s: %w", ns, n, backend.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("kuberay: deleting RayService %s/%s: %w", ns, n, err)
	}
	return nil
}
