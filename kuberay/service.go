package kuberay

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
)

// renderService turns a compiled Serve plan (placement.KindApplication)
// into a RayService: spec.serveConfigV2 holds the plan's Serve
// application config byte for byte (see serveConfigV2) and
// spec.rayClusterConfig is the RayCluster Render builds for a RayJob, one
// TPU worker group per slice group of the plan (a Serve plan has one per
// replica slice), and one of single-host TPU slices per deployment whose
// replicas ask for TPU without a topology (see hostGroups). The result
// passed validateService.
//
// An application whose runtime_env working_dir is a local directory needs
// it packed in o.WorkingDir (Backend.Deploy packs it): serveConfigV2 then
// runs it from the mounted ConfigMap (see withPackedWorkingDir). An
// application with a deployment that owns TPU slices gets raytpu's replica
// runtime as the Ray backend ships it, a py_modules entry, here the
// file:// URI of the zip in ConfigMap replicaRuntimeConfigMapName(o.Name)
// (see replicaRuntimeMountPath), which every Ray container mounts and
// Backend.Deploy writes; serveConfigV2 is then the compiled config with
// that entry added and nothing else changed.
func renderService(p *placement.Plan, o settings) (*rayv1ac.RayServiceApplyConfiguration, error) {
	if errs := o.validate(); len(errs) > 0 {
		return nil, errs
	}
	if err := checkServicePlan(p, o.WorkingDir != nil); err != nil {
		return nil, err
	}
	if errs := serviceQueueError(o.Queue); len(errs) > 0 {
		return nil, fmt.Errorf("kuberay: %w: %w", backend.ErrUnsupported, errs)
	}
	o = o.withDefaults(p)
	cluster, errs := clusterSpec(p, o)
	if len(errs) > 0 {
		return nil, errs
	}
	hosts, errs := hostGroups(p, o, len(p.Slices))
	if len(errs) > 0 {
		return nil, errs
	}
	cluster.WithWorkerGroupSpecs(hosts...)
	digest, err := planDigest(p)
	if err != nil {
		return nil, err
	}
	shown := p
	templates := append([]*corev1ac.PodTemplateSpecApplyConfiguration{cluster.HeadGroupSpec.Template}, podTemplates(cluster.WorkerGroupSpecs)...)
	if wd := o.WorkingDir; wd != nil {
		if env := p.Serve.Config.RuntimeEnv; env != nil && isLocal(env.WorkingDir) {
			shown = withPackedWorkingDir(p, wd)
			digest = mixDigest(digest, wd.SHA256)
			for _, t := range templates {
				if wd.remote == "" {
					mountWorkingDir(t, o.Name)
				}
			}
		}
	}
	if needsReplicaRuntime(p) {
		rt, err := packReplicaRuntime()
		if err != nil {
			return nil, err
		}
		shown = withReplicaRuntime(shown, rt)
		digest = mixDigest(digest, rt.SHA256)
		for _, t := range templates {
			mountReplicaRuntime(t, o.Name)
		}
	}
	cfg, err := serveConfigV2(shown)
	if err != nil {
		return nil, err
	}
	svc := rayv1ac.RayService(o.Name, o.Namespace).
		WithLabels(labels(p)).
		WithAnnotations(map[string]string{AnnotationPlanDigest: digest}).
		WithSpec(rayv1ac.RayServiceSpec().
			WithServeConfigV2(cfg).
			WithRayClusterSpec(cluster))
	if err := validateService(svc); err != nil {
		return nil, err
	}
	return svc, nil
}

// serveConfigV2 is the Serve config a RayService deploys for a Serve plan:
// a YAML document whose one application is the plan's compiled config,
// written as its own compact JSON bytes (JSON is YAML's flow style), so
// the application KubeRay decodes and sends to Ray's Serve REST API is the
// compiled one:
//
//	applications:
//	- {"name":"chat","import_path":"chat:app",...}
func serveConfigV2(p *placement.Plan) (string, error) {
	if !hasServeConfig(p) {
		return "", fmt.Errorf("kuberay: %w: the plan has no Serve config", backend.ErrUnsupported)
	}
	raw, err := p.Serve.Config.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("kuberay: plan %q Serve config: %w", p.Name, err)
	}
	return "applications:\n- " + string(raw) + "\n", nil
}

// hasServeConfig reports whether p holds a Serve application config: one
// that names its ingress (import_path, which Ray requires).
func hasServeConfig(p *placement.Plan) bool {
	return p != nil && p.Serve != nil && p.Serve.Config.ImportPath != ""
}

// checkServicePlan refuses plans renderService cannot deploy; packed says
// whether an application-level local working_dir was packed.
func checkServicePlan(p *placement.Plan, packed bool) error {
	if err := backend.CheckPlan(Name, p, placement.KindApplication); err != nil {
		return err
	}
	app := &p.Serve.Config
	cfg := field.NewPath("plan", "serve", "config")
	var errs field.ErrorList
	for _, e := range localDirs(cfg.Child("runtime_env"), app.RuntimeEnv) {
		if !(packed && e.Field == cfg.Child("runtime_env", "working_dir").String()) {
			errs = append(errs, e)
		}
	}
	for _, d := range app.Deployments {
		if d.RayActorOptions != nil {
			errs = append(errs, localDirs(cfg.Child("deployments").Key(d.Name).Child("ray_actor_options", "runtime_env"), d.RayActorOptions.RuntimeEnv)...)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("kuberay: %w: %w", ErrLocalWorkingDir, errs)
	}
	return nil
}

// localDirs reports the local directories of a Serve runtime_env, which a
// RayService cannot ship: Ray's Serve REST API takes package URIs only.
func localDirs(path *field.Path, env *runtimeenv.RuntimeEnv) field.ErrorList {
	if env == nil {
		return nil
	}
	var errs field.ErrorList
	if wd := env.WorkingDir; wd != "" && !isURI(wd) {
		errs = append(errs, field.Invalid(path.Child("working_dir"), wd, "a local directory must be packed first (Render and Backend.Deploy pack the application's runtime_env working_dir), or use a remote URI (gs://, https://)"))
	}
	for i, m := range env.PyModules {
		if !isURI(m) && !strings.HasPrefix(m, "local://") {
			errs = append(errs, field.Invalid(path.Child("py_modules").Index(i), m, "a RayService takes a remote URI (gs://, https://); upload the module first"))
		}
	}
	return errs
}

// mixDigest is the plan digest of a rendering that also ships the package
// whose SHA-256 is sum: a change of the package changes the digest.
func mixDigest(digest, sum string) string {
	h := sha256.Sum256([]byte(digest + sum))
	return hex.EncodeToString(h[:8])
}

// podTemplates are the pod templates of worker groups.
func podTemplates(groups []rayv1ac.WorkerGroupSpecApplyConfiguration) []*corev1ac.PodTemplateSpecApplyConfiguration {
	out := make([]*corev1ac.PodTemplateSpecApplyConfiguration, len(groups))
	for i := range groups {
		out[i] = groups[i].Template
	}
	return out
}
