package kuberay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// validateJob checks a RayJob against the rules KubeRay, its CRD schema and
// GKE's TPU webhook enforce once it is sent, and returns every violation
// as a field.ErrorList with manifest paths (spec.rayClusterSpec...).
//
// Where each rule lives upstream:
//   - name DNS-1035 and at most 47 characters: KubeRay's
//     ValidateRayJobMetadata (the RayJob goes ValidationFailed);
//   - exactly one of rayClusterSpec and clusterSelector, the selector
//     naming the cluster by ray.io/cluster, a head container: KubeRay's
//     ValidateRayJobSpec / ValidateRayClusterSpec;
//   - minReplicas and maxReplicas set, min <= replicas <= max: KubeRay
//     dereferences both when it scales a group;
//   - google.com/tpu equal in requests and limits: KubeRay passes the limit
//     to ray start --resources, GKE's TPU webhook
//     (GoogleCloudPlatform/ai-on-gke, ray-on-gke/tpu/kuberay-tpu-webhook)
//     reads min(request, limit) as the chips per pod;
//   - both TPU node selectors, and numOfHosts == chips of the topology /
//     google.com/tpu per pod: the webhook's RayCluster validation rejects
//     the RayCluster otherwise (only when KubeRay creates it, so a bad
//     RayJob would be accepted and then never get a cluster);
//   - MEGASCALE_NUM_SLICES on multi-slice groups: the webhook injects
//     MEGASCALE_SLICE_ID, MEGASCALE_COORDINATOR_ADDRESS and MEGASCALE_PORT
//     only into containers that already carry it; on an autoscaled
//     cluster it is the slices a job spans, at most maxReplicas;
//   - the autoscaler's rules (see validateAutoscaler).
func validateJob(job *rayv1ac.RayJobApplyConfiguration) error {
	errs := validateMeta(deref(job.Name), deref(job.Namespace), "RayJob", MaxRayJobName)
	errs = append(errs, checkSize(job, "RayJob")...)
	spec := field.NewPath("spec")
	if job.Spec == nil {
		return append(errs, field.Required(spec, "a RayJob spec"))
	}
	s := job.Spec
	switch hasCluster, hasSelector := s.RayClusterSpec != nil, len(s.ClusterSelector) > 0; {
	case hasCluster && hasSelector:
		errs = append(errs, field.Forbidden(spec.Child("clusterSelector"), "set exactly one of rayClusterSpec and clusterSelector, not both"))
	case !hasCluster && !hasSelector:
		errs = append(errs, field.Required(spec.Child("rayClusterSpec"), "exactly one of rayClusterSpec and clusterSelector"))
	case hasSelector && s.ClusterSelector[clusterSelectorKey] == "":
		errs = append(errs, field.Required(spec.Child("clusterSelector").Key(clusterSelectorKey), "the name of the RayCluster to run on (KubeRay reads only this label)"))
	}
	if strings.TrimSpace(deref(s.Entrypoint)) == "" {
		errs = append(errs, field.Required(spec.Child("entrypoint"), "the command the Ray job runs"))
	}
	if s.RayClusterSpec != nil {
		errs = append(errs, validateCluster(s.RayClusterSpec, spec.Child("rayClusterSpec"))...)
	}
	errs = append(errs, validateQueuedJob(job)...)
	return errs.Err()
}

// validateMeta checks the name and namespace of a KubeRay object of the
// given kind: a DNS-1035 name of at most max characters (KubeRay's
// validateJob<Kind>Metadata), a DNS-1123 namespace.
func validateMeta(name, ns, kind string, max int) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "the "+kind+" name"))
	}
	for _, m := range nameErrors(name, max) {
		if name != "" {
			errs = append(errs, field.Invalid(meta.Child("name"), name, m))
		}
	}
	for _, m := range namespaceErrors(ns) {
		errs = append(errs, field.Invalid(meta.Child("namespace"), ns, m))
	}
	return errs
}

func validateCluster(c *rayv1ac.RayClusterSpecApplyConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	head := path.Child("headGroupSpec")
	if c.HeadGroupSpec == nil {
		errs = append(errs, field.Required(head, "a head group"))
	} else {
		tmpl := head.Child("template", "spec", "containers")
		cs := containers(c.HeadGroupSpec.Template)
		if len(cs) == 0 {
			errs = append(errs, field.Required(tmpl, "the Ray head container"))
		}
		for i, ctr := range cs {
			errs = append(errs, checkImage(ctr, tmpl.Index(i))...)
			if _, ok := limit(ctr, tpu.ResourceGKETPU); ok {
				errs = append(errs, field.Forbidden(tmpl.Index(i).Child("resources"), "the head holds no TPUs; TPU hosts are worker groups"))
			}
		}
	}
	auto := deref(c.EnableInTreeAutoscaling)
	errs = append(errs, validateAutoscaler(c, path, auto)...)
	names := map[string]bool{}
	for i, g := range c.WorkerGroupSpecs {
		errs = append(errs, validateGroup(&g, path.Child("workerGroupSpecs").Index(i), names, auto)...)
	}
	return errs
}

func validateGroup(g *rayv1ac.WorkerGroupSpecApplyConfiguration, path *field.Path, seen map[string]bool, autoscaled bool) field.ErrorList {
	var errs field.ErrorList
	name := deref(g.GroupName)
	switch {
	case name == "":
		errs = append(errs, field.Required(path.Child("groupName"), "a worker group name"))
	case seen[name]:
		errs = append(errs, field.Invalid(path.Child("groupName"), name, "worker group names must be unique"))
	}
	seen[name] = true
	for _, f := range []struct {
		name string
		v    *int32
	}{{"replicas", g.Replicas}, {"minReplicas", g.MinReplicas}, {"maxReplicas", g.MaxReplicas}} {
		if f.v == nil {
			errs = append(errs, field.Required(path.Child(f.name), "always set: KubeRay dereferences it when scaling the group"))
		} else if *f.v < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), *f.v, "must not be negative"))
		}
	}
	if g.MinReplicas != nil && g.MaxReplicas != nil && *g.MinReplicas > *g.MaxReplicas {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), *g.MinReplicas, fmt.Sprintf("must not exceed maxReplicas %d", *g.MaxReplicas)))
	} else if g.Replicas != nil && g.MinReplicas != nil && g.MaxReplicas != nil && !(*g.MinReplicas <= *g.Replicas && *g.Replicas <= *g.MaxReplicas) {
		errs = append(errs, field.Invalid(path.Child("replicas"), *g.Replicas, fmt.Sprintf("must lie within minReplicas %d and maxReplicas %d", *g.MinReplicas, *g.MaxReplicas)))
	}
	hosts := int32(1)
	if g.NumOfHosts != nil {
		hosts = *g.NumOfHosts
		if hosts < 1 {
			errs = append(errs, field.Invalid(path.Child("numOfHosts"), hosts, "at least 1"))
		}
	}
	tmpl := path.Child("template", "spec")
	cs := containers(g.Template)
	if len(cs) == 0 {
		return append(errs, field.Required(tmpl.Child("containers"), "the Ray worker container"))
	}
	for i, ctr := range cs {
		errs = append(errs, checkImage(ctr, tmpl.Child("containers").Index(i))...)
	}
	ray := cs[0]
	res := tmpl.Child("containers").Index(0).Child("resources")
	lim, hasLim := limit(ray, tpu.ResourceGKETPU)
	req, hasReq := request(ray, tpu.ResourceGKETPU)
	var sel map[string]string
	if g.Template != nil && g.Template.Spec != nil {
		sel = g.Template.Spec.NodeSelector
	}
	if !hasLim && !hasReq && sel[tpu.LabelGKEAccelerator] == "" && sel[tpu.LabelGKETopology] == "" {
		return errs // not a TPU group
	}
	switch {
	case !hasLim:
		errs = append(errs, field.Required(res.Child("limits").Key(tpu.ResourceGKETPU), "TPU chips per pod; KubeRay passes the limit to ray start --resources"))
	case !hasReq:
		errs = append(errs, field.Required(res.Child("requests").Key(tpu.ResourceGKETPU), "equal to the limit"))
	case lim.Cmp(req) != 0:
		errs = append(errs, field.Invalid(res.Child("requests").Key(tpu.ResourceGKETPU), req.String(), "must equal limits "+lim.String()))
	}
	selPath := tmpl.Child("nodeSelector")
	accel, topo := sel[tpu.LabelGKEAccelerator], sel[tpu.LabelGKETopology]
	if accel == "" {
		errs = append(errs, field.Required(selPath.Key(tpu.LabelGKEAccelerator), "the GKE TPU accelerator of the slice"))
	} else if valid := gkeAccelerators(); !slices.Contains(valid, accel) {
		errs = append(errs, field.NotSupported(selPath.Key(tpu.LabelGKEAccelerator), accel, valid))
	}
	if topo == "" {
		errs = append(errs, field.Required(selPath.Key(tpu.LabelGKETopology), "the slice topology (e.g. 4x4)"))
	} else if t, err := tpu.ParseTopology(topo); err != nil {
		errs = append(errs, field.Invalid(selPath.Key(tpu.LabelGKETopology), topo, err.Error()))
	} else if hasLim && lim.Value() > 0 {
		perPod := lim.Value()
		if int64(t.Chips())%perPod != 0 || int64(t.Chips())/perPod != int64(hosts) {
			errs = append(errs, field.Invalid(path.Child("numOfHosts"), hosts, fmt.Sprintf("must equal the chips of topology %s (%d) / %s per pod (%d) = %s", topo, t.Chips(), tpu.ResourceGKETPU, perPod, hostsWanted(t.Chips(), perPod))))
		}
	}
	if autoscaled {
		// The autoscaler moves replicas; MEGASCALE_NUM_SLICES is the
		// slices one job spans, which the group must be able to reach.
		if v, ok := envValue(ray, rayvocab.EnvMegascaleNumSlices); ok {
			n, err := strconv.Atoi(v)
			if hi := deref(g.MaxReplicas); err != nil || n < 1 || (g.MaxReplicas != nil && int32(n) > hi) {
				errs = append(errs, field.Invalid(tmpl.Child("containers").Index(0).Child("env").Key(rayvocab.EnvMegascaleNumSlices), v,
					fmt.Sprintf("the slices one job spans: a whole number from 1 to maxReplicas (%d)", hi)))
			}
		}
		if deref(g.Suspend) {
			errs = append(errs, field.Forbidden(path.Child("suspend"), "KubeRay refuses to suspend a worker group while the autoscaler runs (enableInTreeAutoscaling: true)"))
		}
	} else if g.Replicas != nil && *g.Replicas > 1 {
		want := strconv.Itoa(int(*g.Replicas))
		if v, ok := envValue(ray, rayvocab.EnvMegascaleNumSlices); !ok {
			errs = append(errs, field.Required(tmpl.Child("containers").Index(0).Child("env").Key(rayvocab.EnvMegascaleNumSlices), "set to the number of slices ("+want+") so GKE's TPU webhook injects MEGASCALE_SLICE_ID and the coordinator address"))
		} else if v != want {
			errs = append(errs, field.Invalid(tmpl.Child("containers").Index(0).Child("env").Key(rayvocab.EnvMegascaleNumSlices), v, "must equal replicas ("+want+"): one replica is one slice"))
		}
	}
	return errs
}

func hostsWanted(chips int, perPod int64) string {
	if int64(chips)%perPod != 0 {
		return "not a whole number"
	}
	return strconv.FormatInt(int64(chips)/perPod, 10)
}

// gkeAccelerators lists every cloud.google.com/gke-tpu-accelerator value
// the catalog knows.
func gkeAccelerators() []string {
	var out []string
	for _, g := range tpu.Generations() {
		for _, a := range []string{g.GKEAccelerator, g.GKEAcceleratorSingleHost} {
			if a != "" && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

func checkImage(c *corev1ac.ContainerApplyConfiguration, path *field.Path) field.ErrorList {
	if strings.TrimSpace(deref(c.Image)) == "" {
		return field.ErrorList{field.Required(path.Child("image"), "a container image")}
	}
	return nil
}

func containers(t *corev1ac.PodTemplateSpecApplyConfiguration) []*corev1ac.ContainerApplyConfiguration {
	if t == nil || t.Spec == nil {
		return nil
	}
	out := make([]*corev1ac.ContainerApplyConfiguration, len(t.Spec.Containers))
	for i := range t.Spec.Containers {
		out[i] = &t.Spec.Containers[i]
	}
	return out
}

func limit(c *corev1ac.ContainerApplyConfiguration, name string) (resource.Quantity, bool) {
	if c.Resources == nil || c.Resources.Limits == nil {
		return resource.Quantity{}, false
	}
	q, ok := (*c.Resources.Limits)[corev1.ResourceName(name)]
	return q, ok
}

func request(c *corev1ac.ContainerApplyConfiguration, name string) (resource.Quantity, bool) {
	if c.Resources == nil || c.Resources.Requests == nil {
		return resource.Quantity{}, false
	}
	q, ok := (*c.Resources.Requests)[corev1.ResourceName(name)]
	return q, ok
}

func envValue(c *corev1ac.ContainerApplyConfiguration, name string) (string, bool) {
	for _, e := range c.Env {
		if deref(e.Name) == name {
			return deref(e.Value), true
		}
	}
	return "", false
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// maxObjectBytes is the largest object raytpu renders or applies: etcd's
// default request size limit (--max-request-bytes, 1.5 MiB), above which
// the apiserver cannot store an object.
const maxObjectBytes = 3 << 19

// checkSize refuses an object whose JSON is over maxObjectBytes, before it
// is printed or sent.
func checkSize(obj any, kind string) field.ErrorList {
	b, err := json.Marshal(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath(kind), nil, "cannot be written as JSON: "+err.Error())}
	}
	if len(b) > maxObjectBytes {
		return field.ErrorList{field.TooMany(field.NewPath(kind), fmt.Sprintf("%d bytes", len(b)), maxObjectBytes,
			"bytes: etcd's request size limit, above which the apiserver cannot store the object; split the workload")}
	}
	return nil
}

// validateAutoscaler checks the autoscaler fields of a cluster spec:
//   - spec.autoscalerOptions only with enableInTreeAutoscaling: true
//     (KubeRay reads them only then; raytpu refuses them otherwise, where
//     they would silently do nothing);
//   - upscalingMode Default, Conservative or Aggressive and version v1 or
//     v2 (the CRD's enums); idleTimeoutSeconds not negative;
//   - KubeRay v1.5.0's ValidateRayClusterSpec: the head's
//     RAY_enable_autoscaler_v2 not "1"/"true" without autoscaling, and not
//     set together with autoscalerOptions.version; with version v2 every
//     pod template's restartPolicy Never or unset.
func validateAutoscaler(c *rayv1ac.RayClusterSpecApplyConfiguration, path *field.Path, auto bool) field.ErrorList {
	var errs field.ErrorList
	opts := path.Child("autoscalerOptions")
	var headEnv *corev1ac.EnvVarApplyConfiguration
	if c.HeadGroupSpec != nil {
		if cs := containers(c.HeadGroupSpec.Template); len(cs) > 0 {
			for i := range cs[0].Env {
				if deref(cs[0].Env[i].Name) == envAutoscalerV2 {
					headEnv = &cs[0].Env[i]
				}
			}
		}
	}
	envPath := path.Child("headGroupSpec", "template", "spec", "containers").Index(0).Child("env").Key(envAutoscalerV2)
	if !auto {
		if c.AutoscalerOptions != nil {
			errs = append(errs, field.Forbidden(opts, "read only by Ray's autoscaler, which runs with enableInTreeAutoscaling: true"))
		}
		if headEnv != nil && (deref(headEnv.Value) == "1" || deref(headEnv.Value) == "true") {
			errs = append(errs, field.Forbidden(envPath, "KubeRay refuses autoscaler v2 without enableInTreeAutoscaling: true"))
		}
		return errs
	}
	o := c.AutoscalerOptions
	if o == nil {
		return errs
	}
	if v := o.UpscalingMode; v != nil && !slices.Contains(upscalingModes, string(*v)) {
		errs = append(errs, field.NotSupported(opts.Child("upscalingMode"), string(*v), upscalingModes))
	}
	if v := o.IdleTimeoutSeconds; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(opts.Child("idleTimeoutSeconds"), *v, "seconds, 0 or more (unset: 60)"))
	}
	if v := o.Version; v != nil {
		if !slices.Contains(autoscalerVersions, string(*v)) {
			errs = append(errs, field.NotSupported(opts.Child("version"), string(*v), autoscalerVersions))
		}
		if headEnv != nil {
			errs = append(errs, field.Forbidden(envPath, "KubeRay refuses it together with autoscalerOptions.version; set only the version"))
		}
		if string(*v) == AutoscalerV2 {
			errs = append(errs, restartPolicyErrors(c, path)...)
		}
	}
	return errs
}

// envAutoscalerV2 is the head's environment variable that turns on Ray's
// autoscaler v2 (KubeRay's utils.RAY_ENABLE_AUTOSCALER_V2).
const envAutoscalerV2 = "RAY_enable_autoscaler_v2"

// restartPolicyErrors: KubeRay v1.5.0 runs autoscaler v2 only with pods
// that are never restarted in place.
func restartPolicyErrors(c *rayv1ac.RayClusterSpecApplyConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(t *corev1ac.PodTemplateSpecApplyConfiguration, p *field.Path) {
		if t == nil || t.Spec == nil || t.Spec.RestartPolicy == nil {
			return
		}
		if rp := *t.Spec.RestartPolicy; rp != corev1.RestartPolicyNever {
			errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), string(rp), []string{string(corev1.RestartPolicyNever)}).
				WithDetail("or unset: KubeRay's autoscaler v2 replaces pods, never restarts them"))
		}
	}
	if c.HeadGroupSpec != nil {
		check(c.HeadGroupSpec.Template, path.Child("headGroupSpec"))
	}
	for i := range c.WorkerGroupSpecs {
		check(c.WorkerGroupSpecs[i].Template, path.Child("workerGroupSpecs").Index(i))
	}
	return errs
}
