package kuberay

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/raytpu/raytpu/placement"
)

// A Serve application whose runtime_env working_dir is a local directory
// ships it as a job does (see WorkingDirMountPath): Deploy packs it into
// ConfigMap workingDirConfigMapName(<RayService name>), owned by the
// RayService and mounted into every Ray container of its RayClusters, and
// serveConfigV2 carries the application with working_dir replaced by the
// file:// URI of the mounted zip (and no excludes, which shaped the zip);
// every other field of the compiled config is kept. A change of the files
// changes the URI, which KubeRay submits to the running cluster in place;
// kubelet refreshes a mounted ConfigMap within about a minute, so Ray may
// fail to fetch the new zip until then and retries.

// withPackedWorkingDir returns a copy of the Serve plan whose application
// runs in the packed working_dir; p must have an application runtime_env.
func withPackedWorkingDir(p *placement.Plan, wd *WorkingDir) *placement.Plan {
	env := p.Serve.Config.RuntimeEnv.Clone()
	env.WorkingDir = wd.URI()
	env.Excludes = nil
	out := *p
	out.Serve = &placement.ServeApplication{Config: p.Serve.Config}
	out.Serve.Config.RuntimeEnv = env
	return &out
}

// applyServiceWorkingDir writes the ConfigMap of a RayService's packed
// working_dir, owned by the RayService.
func (b *Backend) applyServiceWorkingDir(ctx context.Context, svc *rayv1.RayService, wd *WorkingDir, p *placement.Plan) error {
	cm := workingDirConfigMap(svc.Name, svc.Namespace, wd, labels(p), serviceOwner(svc))
	if _, err := b.kube.CoreV1().ConfigMaps(svc.Namespace).Apply(ctx, cm, b.applyOptions()); err != nil {
		return fmt.Errorf("kuberay: applying the working_dir ConfigMap %s/%s of RayService %s: %w", svc.Namespace, *cm.Name, svc.Name, err)
	}
	return nil
}

// serviceOwner is the owner reference that makes RayService svc own an
// object, so that it goes with the RayService.
func serviceOwner(svc *rayv1.RayService) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().WithAPIVersion(rayv1.GroupVersion.String()).WithKind(KindRayService).
		WithName(svc.Name).WithUID(svc.UID)
}

// applyServiceFiles writes the ConfigMaps RayService svc of plan p
// mounts: its packed working_dir (wd, when set) and the replica runtime
// (when a deployment owns TPU slices).
func (b *Backend) applyServiceFiles(ctx context.Context, svc *rayv1.RayService, wd *WorkingDir, p *placement.Plan) error {
	if wd != nil && wd.remote == "" {
		if err := b.applyServiceWorkingDir(ctx, svc, wd, p); err != nil {
			return err
		}
	}
	if !needsReplicaRuntime(p) {
		return nil
	}
	return b.applyReplicaRuntime(ctx, svc, p)
}
