package kuberay

import (
	"context"
	"fmt"
	"os"
	"sync"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// How the replica runtime reaches a RayService's pods.
//
// A Serve deployment that owns TPU slices imports raytpu's replica runtime
// (`from raytpu_replica import tpu_slice`), which the Ray backend uploads
// as a py_modules package. A RayService ships the same package, the
// directory rayruntime.WriteModule writes, zipped by the working_dir
// packager: ConfigMap replicaRuntimeConfigMapName(<RayService name>),
// owned by the RayService and mounted read-only at replicaRuntimeMountPath
// into every Ray container of its RayClusters, and serveConfigV2 lists the
// file:// URI of the mounted zip in py_modules where the Ray backend lists
// its gcs:// URI (rayruntime.ShipModule). Ray (2.60) fetches a file:// zip
// like any remote package and drops its single top-level directory, so
// the zip holds raytpu_replica/ one directory down and the node's
// py_modules directory holds raytpu_replica itself.
const (
	// replicaRuntimeMountPath is where Ray containers mount the replica
	// runtime's ConfigMap.
	replicaRuntimeMountPath = "/raytpu/replica_runtime"
	// replicaRuntimeVolume names the pod volume.
	replicaRuntimeVolume = "raytpu-replica-runtime"
)

// replicaRuntime is raytpu's replica runtime packed for a ConfigMap.
type replicaRuntime struct {
	// Zip holds the package directory under one top-level directory, with
	// fixed timestamps: the same runtime gives the same bytes.
	Zip []byte
	// SHA256 of Zip, hex.
	SHA256 string
}

// Key is the ConfigMap key (and file name) of the zip.
func (r *replicaRuntime) Key() string {
	return rayruntime.ModuleName + "-" + r.SHA256[:16] + ".zip"
}

// URI is the py_modules entry that points Ray at the mounted zip.
func (r *replicaRuntime) URI() string {
	return "file://" + replicaRuntimeMountPath + "/" + r.Key()
}

// packReplicaRuntime packs the replica runtime (rayruntime.WriteModule)
// once per process.
var packReplicaRuntime = sync.OnceValues(func() (*replicaRuntime, error) {
	dir, err := os.MkdirTemp("", "raytpu-replica-")
	if err != nil {
		return nil, fmt.Errorf("kuberay: packing the replica runtime: %w", err)
	}
	defer os.RemoveAll(dir)
	if _, err := rayruntime.WriteModule(dir); err != nil {
		return nil, err
	}
	w, err := PackWorkingDir(dir, nil)
	if err != nil {
		return nil, fmt.Errorf("kuberay: packing the replica runtime: %w", err)
	}
	return &replicaRuntime{Zip: w.Zip, SHA256: w.SHA256}, nil
})

// replicaRuntimeConfigMapName is the ConfigMap holding the replica runtime
// of the RayService named svc.
func replicaRuntimeConfigMapName(svc string) string { return svc + "-replica-runtime" }

// replicaRuntimeConfigMap is the ConfigMap that holds r for RayService
// svc, labelled as raytpu's; owner, when set, makes the RayService own it.
func replicaRuntimeConfigMap(svc, ns string, r *replicaRuntime, planLabels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration) *corev1ac.ConfigMapApplyConfiguration {
	return zipConfigMap(replicaRuntimeConfigMapName(svc), ns, r.Key(), r.Zip, planLabels, owner)
}

// needsReplicaRuntime reports whether a Serve plan has a deployment that
// owns TPU slices (one carrying a slice reservation).
func needsReplicaRuntime(p *placement.Plan) bool {
	return rayruntime.HasSliceDeployments(&p.Serve.Config)
}

// withReplicaRuntime returns a copy of the Serve plan whose config lists
// the mounted runtime in py_modules as rayruntime.ShipModule places it.
func withReplicaRuntime(p *placement.Plan, r *replicaRuntime) *placement.Plan {
	out := *p
	out.Serve = &placement.ServeApplication{Config: p.Serve.Config}
	rayruntime.ShipModule(&out.Serve.Config, r.URI())
	return &out
}

// mountReplicaRuntime adds the replica runtime's ConfigMap volume to a pod
// template and mounts it read-only into its first (Ray) container.
func mountReplicaRuntime(t *corev1ac.PodTemplateSpecApplyConfiguration, svc string) {
	mountConfigMap(t, replicaRuntimeVolume, replicaRuntimeConfigMapName(svc), replicaRuntimeMountPath)
}

// applyReplicaRuntime writes the ConfigMap of a RayService's replica
// runtime, owned by the RayService, labelled as plan p's.
func (b *Backend) applyReplicaRuntime(ctx context.Context, svc *rayv1.RayService, p *placement.Plan) error {
	return b.writeReplicaRuntime(ctx, svc, labels(p))
}

// writeReplicaRuntime writes the ConfigMap of a RayService's replica
// runtime, owned by the RayService, with labels.
func (b *Backend) writeReplicaRuntime(ctx context.Context, svc *rayv1.RayService, labels map[string]string) error {
	if b.kube == nil {
		return fmt.Errorf("kuberay: %w: RayService %s/%s mounts the replica runtime's ConfigMap and the backend has no Kubernetes client to write it (use New or WithKubeClient)", backend.ErrUnsupported, svc.Namespace, svc.Name)
	}
	r, err := packReplicaRuntime()
	if err != nil {
		return err
	}
	cm := replicaRuntimeConfigMap(svc.Name, svc.Namespace, r, labels, serviceOwner(svc))
	if _, err := b.kube.CoreV1().ConfigMaps(svc.Namespace).Apply(ctx, cm, b.applyOptions()); err != nil {
		return fmt.Errorf("kuberay: applying the replica runtime ConfigMap %s/%s of RayService %s: %w", svc.Namespace, *cm.Name, svc.Name, err)
	}
	return nil
}

// mountsReplicaRuntime reports whether a rendered RayService's head mounts
// the replica runtime's ConfigMap (see mountReplicaRuntime).
func mountsReplicaRuntime(svc *rayv1ac.RayServiceApplyConfiguration) bool {
	if svc.Spec == nil || svc.Spec.RayClusterSpec == nil || svc.Spec.RayClusterSpec.HeadGroupSpec == nil ||
		svc.Spec.RayClusterSpec.HeadGroupSpec.Template == nil || svc.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec == nil {
		return false
	}
	for _, v := range svc.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Volumes {
		if deref(v.Name) == replicaRuntimeVolume && v.ConfigMap != nil && deref(v.ConfigMap.Name) == replicaRuntimeConfigMapName(deref(svc.Name)) {
			return true
		}
	}
	return false
}
