package kuberay

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Kinds of KubeRay object a manifest may hold.
const (
	KindRayJob     = "RayJob"
	KindRayService = "RayService"
	KindRayCluster = "RayCluster"
)

// decodeManifest reads one KubeRay manifest (YAML or JSON, as marshalYAML
// writes it) into the apply configuration of its kind: a
// *rayv1ac.RayJobApplyConfiguration, *rayv1ac.RayServiceApplyConfiguration
// or *rayv1ac.RayClusterApplyConfiguration. Unknown fields are errors.
func decodeManifest(manifest []byte) (any, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(manifest, &head); err != nil {
		return nil, fmt.Errorf("kuberay: decoding manifest: %w", err)
	}
	if head.APIVersion != "ray.io/v1" {
		return nil, fmt.Errorf("kuberay: manifest apiVersion %q is not supported (valid: ray.io/v1)", head.APIVersion)
	}
	var obj any
	switch head.Kind {
	case KindRayJob:
		obj = &rayv1ac.RayJobApplyConfiguration{}
	case KindRayService:
		obj = &rayv1ac.RayServiceApplyConfiguration{}
	case KindRayCluster:
		obj = &rayv1ac.RayClusterApplyConfiguration{}
	default:
		return nil, fmt.Errorf("kuberay: manifest kind %q is not supported (valid: %s, %s, %s)", head.Kind, KindRayCluster, KindRayJob, KindRayService)
	}
	if err := yaml.UnmarshalStrict(manifest, obj); err != nil {
		return nil, fmt.Errorf("kuberay: decoding %s manifest: %w", head.Kind, err)
	}
	return obj, nil
}

// ApplyManifest server-side applies what `raytpu render` prints (what
// Manifests.YAML or Manifests.JSON write, or one RayJob, RayService or
// RayCluster alone) into namespace ns (empty: the backend's) with field
// manager "raytpu", as ApplyManifests does. It returns the object the
// apiserver holds (*rayv1.RayJob, *rayv1.RayService or *rayv1.RayCluster).
func (b *Backend) ApplyManifest(ctx context.Context, ns string, manifest []byte) (runtime.Object, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	objs, err := DecodeManifests(manifest)
	if err != nil {
		return nil, err
	}
	return b.ApplyManifests(ctx, ns, objs)
}

// applyObject server-side applies a rendered KubeRay object into
// namespace ns; a namespace in the object is replaced by ns. It is
// checked first as Render checks what it renders. A RayService that
// mounts the replica runtime's ConfigMap (Render mounts it when a
// deployment owns TPU slices) gets it written too, owned by the
// RayService, as Deploy writes it.
func (b *Backend) applyObject(ctx context.Context, ns string, obj any) (runtime.Object, error) {
	opts := b.applyOptions()
	ray := b.client.RayV1()
	var (
		out  runtime.Object
		err  error
		kind string
		name string
	)
	switch o := obj.(type) {
	case *rayv1ac.RayJobApplyConfiguration:
		kind = KindRayJob
		if o != nil {
			name = deref(o.Name)
		}
		if o == nil || o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayJob is nil or has no metadata")
		}
		o.WithNamespace(ns)
		if err := validateJob(o); err != nil {
			return nil, err
		}
		out, err = ray.RayJobs(ns).Apply(ctx, o, opts)
	case *rayv1ac.RayServiceApplyConfiguration:
		kind = KindRayService
		if o != nil {
			name = deref(o.Name)
		}
		if o == nil || o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayService is nil or has no metadata")
		}
		o.WithNamespace(ns)
		if err := validateService(o); err != nil {
			return nil, err
		}
		out, err = ray.RayServices(ns).Apply(ctx, o, opts)
	case *rayv1ac.RayClusterApplyConfiguration:
		kind = KindRayCluster
		if o != nil {
			name = deref(o.Name)
		}
		if o == nil || o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayCluster is nil or has no metadata")
		}
		o.WithNamespace(ns)
		if err := validateRayCluster(o); err != nil {
			return nil, err
		}
		out, err = ray.RayClusters(ns).Apply(ctx, o, opts)
	default:
		return nil, fmt.Errorf("kuberay: cannot apply a %T (valid: RayJob, RayService and RayCluster apply configurations)", obj)
	}
	if err != nil {
		return nil, applyError(kind, ns, name, err)
	}
	if svc, ok := out.(*rayv1.RayService); ok && mountsReplicaRuntime(obj.(*rayv1ac.RayServiceApplyConfiguration)) {
		if err := b.writeReplicaRuntime(ctx, svc, svc.Labels); err != nil {
			return nil, err
		}
	}
	return out, nil
}
