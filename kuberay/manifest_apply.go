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

// DecodeManifest reads one KubeRay manifest (YAML or JSON, as MarshalYAML
// writes it) into the apply configuration of its kind: a
// *rayv1ac.RayJobApplyConfiguration, *rayv1ac.RayServiceApplyConfiguration
// or *rayv1ac.RayClusterApplyConfiguration. Unknown fields are errors.
func DecodeManifest(manifest []byte) (any, error) {
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

// ApplyManifest server-side applies what `raytpu render` prints (one
// RayJob, RayService or RayCluster manifest as MarshalYAML writes it, or
// RenderManifests' ConfigMaps and object as MarshalManifestsYAML or
// MarshalManifestsJSON write them) into namespace ns with field manager
// "raytpu": the ConfigMaps first, then the object, after Validate,
// ValidateService or ValidateCluster accepts it. It returns the object the
// apiserver holds (*rayv1.RayJob, *rayv1.RayService or *rayv1.RayCluster).
func (b *Backend) ApplyManifest(ctx context.Context, ns string, manifest []byte) (runtime.Object, error) {
	objs, err := DecodeManifests(manifest)
	if err != nil {
		return nil, err
	}
	return b.applyManifests(ctx, ns, objs)
}

// ApplyObject server-side applies a rendered KubeRay object (from Render,
// RenderService, RenderCluster or DecodeManifest) into namespace ns, as
// ApplyManifest does; a namespace in the object is replaced by ns. A
// RayService that mounts the replica runtime's ConfigMap (RenderService
// mounts it when a deployment owns TPU slices) gets it written too, owned
// by the RayService, as Deploy writes it.
func (b *Backend) ApplyObject(ctx context.Context, ns string, obj any) (runtime.Object, error) {
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
		kind, name = KindRayJob, deref(o.Name)
		if o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayJob has no metadata")
		}
		o.WithNamespace(ns)
		if err := Validate(o); err != nil {
			return nil, err
		}
		out, err = ray.RayJobs(ns).Apply(ctx, o, opts)
	case *rayv1ac.RayServiceApplyConfiguration:
		kind, name = KindRayService, deref(o.Name)
		if o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayService has no metadata")
		}
		o.WithNamespace(ns)
		if err := ValidateService(o); err != nil {
			return nil, err
		}
		out, err = ray.RayServices(ns).Apply(ctx, o, opts)
	case *rayv1ac.RayClusterApplyConfiguration:
		kind, name = KindRayCluster, deref(o.Name)
		if o.ObjectMetaApplyConfiguration == nil {
			return nil, fmt.Errorf("kuberay: the RayCluster has no metadata")
		}
		o.WithNamespace(ns)
		if err := ValidateCluster(o); err != nil {
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
