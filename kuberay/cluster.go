package kuberay

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// renderCluster turns a slice plan (placement.KindSlicePlacementGroup:
// slices reserved, nothing run) into a plain RayCluster: a head without
// TPUs and one TPU worker group per slice group, as renderJob builds the
// RayCluster of a RayJob. The result passed validateCluster.
func renderCluster(p *placement.Plan, o settings) (*rayv1ac.RayClusterApplyConfiguration, error) {
	if err := backend.CheckPlan(Name, p, placement.KindSlicePlacementGroup); err != nil {
		return nil, err // jobs run as RayJobs, Serve applications as RayServices
	}
	if errs := o.validate(); len(errs) > 0 {
		return nil, errs
	}
	o = o.withDefaults(p)
	spec, errs := clusterSpec(p, o)
	if len(errs) > 0 {
		return nil, errs
	}
	digest, err := planDigest(p)
	if err != nil {
		return nil, err
	}
	rc := rayv1ac.RayCluster(o.Name, o.Namespace).
		WithLabels(labels(p)).
		WithAnnotations(map[string]string{AnnotationPlanDigest: digest}).
		WithSpec(spec)
	queueCluster(rc, o.Queue)
	if err := validateRayCluster(rc); err != nil {
		return nil, err
	}
	return rc, nil
}

// Up renders the slice plan as RayCluster NameFor(p.Name) and
// server-side applies it with field manager "raytpu"; applying the same
// plan again changes nothing, and a changed plan updates the RayCluster
// (KubeRay scales worker groups in place). A RayCluster of that name that
// raytpu did not create is left alone: an error matching ErrNotManaged and
// backend.ErrAlreadyExists. WaitCluster follows it until it is ready.
func (b *Backend) Up(ctx context.Context, p *placement.Plan) (*rayv1.RayCluster, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	o := settings{Options: b.opts}
	if p != nil {
		o.Name = NameFor(p.Name)
	}
	rc, err := renderCluster(p, o)
	if err != nil {
		return nil, err
	}
	clusters := b.client.RayV1().RayClusters(o.Namespace)
	cur, err := clusters.Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("kuberay: reading RayCluster %s/%s: %w", o.Namespace, o.Name, err)
	case cur.Labels[LabelManagedBy] != FieldManager:
		return nil, fmt.Errorf("kuberay: RayCluster %s/%s: %w: %w (label %s=%q); choose another plan name", o.Namespace, o.Name, backend.ErrAlreadyExists, ErrNotManaged, LabelManagedBy, cur.Labels[LabelManagedBy])
	case cur.Annotations[AnnotationPlanDigest] == rc.Annotations[AnnotationPlanDigest]:
		// The same plan: nothing to send (see Backend.Apply).
		return cur, nil
	}
	out, err := clusters.Apply(ctx, rc, b.applyOptions())
	if err != nil {
		return nil, applyError(KindRayCluster, o.Namespace, o.Name, err)
	}
	b.logger.DebugContext(ctx, "kuberay: applied RayCluster", "raycluster", o.Name, "generation", out.Generation)
	return out, nil
}

// Down deletes RayCluster NameFor(name), which raytpu created; its
// pods and Services are owned by it and go with it (Kubernetes' garbage
// collector deletes them). A RayCluster raytpu did not create, such as one
// KubeRay made for a RayJob or RayService, is left alone (ErrNotManaged);
// none of that name matches backend.ErrNotFound.
func (b *Backend) Down(ctx context.Context, name string) error {
	if err := b.usable(ctx); err != nil {
		return err
	}
	ns, n := b.opts.Namespace, NameFor(name)
	clusters := b.client.RayV1().RayClusters(ns)
	rc, err := clusters.Get(ctx, n, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("kuberay: RayCluster %s/%s: %w", ns, n, backend.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("kuberay: reading RayCluster %s/%s: %w", ns, n, err)
	}
	if rc.Labels[LabelManagedBy] != FieldManager {
		return fmt.Errorf("kuberay: RayCluster %s/%s: %w (label %s=%q)", ns, n, ErrNotManaged, LabelManagedBy, rc.Labels[LabelManagedBy])
	}
	err = clusters.Delete(ctx, n, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(rc.UID))})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("kuberay: RayCluster %s/%s: %w", ns, n, backend.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("kuberay: deleting RayCluster %s/%s: %w", ns, n, err)
	}
	return nil
}
