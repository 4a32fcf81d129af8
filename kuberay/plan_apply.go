package kuberay

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// renderObject renders a plan as the KubeRay object its kind runs as: a
// RayJob for a job, a RayService for a Serve application, a RayCluster
// for a slice plan.
func renderObject(p *placement.Plan, o settings) (any, error) {
	switch {
	case p.Kind == placement.KindApplication:
		return renderService(p, o)
	case p.Kind == placement.KindSlicePlacementGroup:
		return renderCluster(p, o)
	default:
		return renderJob(p, o)
	}
}

// ApplyPlan applies a plan as the object its kind runs as, as Apply (a job,
// as RayJob NameFor(p.Name)), Deploy (a Serve application) or Up (a slice
// plan) do, and returns the object the apiserver holds.
func (b *Backend) ApplyPlan(ctx context.Context, p *placement.Plan) (runtime.Object, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if err := backend.CheckPlan(Name, p, placement.Kinds()...); err != nil {
		return nil, err
	}
	switch p.Kind {
	case placement.KindApplication:
		if _, err := b.Deploy(ctx, p); err != nil {
			return nil, err
		}
		svc, err := b.client.RayV1().RayServices(b.opts.Namespace).Get(ctx, NameFor(p.Name), metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("kuberay: reading RayService %s/%s: %w", b.opts.Namespace, NameFor(p.Name), err)
		}
		return svc, nil
	case placement.KindSlicePlacementGroup:
		return b.Up(ctx, p)
	default:
		return b.Apply(ctx, p, NameFor(p.Name))
	}
}

// Ref names an applied KubeRay object.
type Ref struct {
	Kind, Namespace, Name, UID string
	Generation                 int64
}

// String is "RayJob ns/name".
func (r Ref) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// RefOf names obj, a *rayv1.RayJob, *rayv1.RayService or *rayv1.RayCluster
// (the zero Ref for anything else, nil included).
func RefOf(obj runtime.Object) Ref {
	var kind string
	switch o := obj.(type) {
	case *rayv1.RayJob:
		if o == nil {
			return Ref{}
		}
		kind = KindRayJob
	case *rayv1.RayService:
		if o == nil {
			return Ref{}
		}
		kind = KindRayService
	case *rayv1.RayCluster:
		if o == nil {
			return Ref{}
		}
		kind = KindRayCluster
	default:
		return Ref{}
	}
	m := obj.(metav1.Object)
	return Ref{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), UID: string(m.GetUID()), Generation: m.GetGeneration()}
}
