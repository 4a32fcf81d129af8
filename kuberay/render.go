package kuberay

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Names raytpu puts on the objects it creates.
const (
	// FieldManager owns the fields raytpu applies.
	FieldManager = "raytpu"
	// LabelManagedBy marks objects raytpu created.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelPlan carries the plan's name (made a valid label value).
	LabelPlan = "raytpu.dev/plan"
	// AnnotationPlanDigest holds the digest of the plan a RayJob runs, by
	// which a retried Run recognises its own RayJob.
	AnnotationPlanDigest = "raytpu.dev/plan-digest"
	// MetadataPlanDigest is the Ray job metadata key with the same digest.
	MetadataPlanDigest = "raytpu.plan-digest"
	// HeadContainer and WorkerContainer name the Ray containers.
	HeadContainer   = "ray-head"
	WorkerContainer = "ray-worker"
	// DefaultNamespace is used when Options.Namespace is empty.
	DefaultNamespace = "default"
)

// ErrLocalWorkingDir means a plan names a local directory this backend
// cannot ship: a job's working_dir that cannot be packed, a
// local py_module, or a local directory in a Serve runtime_env (a
// RayService takes URIs only). It also matches backend.ErrUnsupported: a
// feature the backend does not have yet, which another backend may run.
var ErrLocalWorkingDir error = &unsupported{"a local directory cannot be shipped to a KubeRay cluster this way"}

// unsupported is a sentinel of this backend that also matches
// backend.ErrUnsupported.
type unsupported struct{ msg string }

func (e *unsupported) Error() string        { return e.msg }
func (e *unsupported) Is(target error) bool { return target == backend.ErrUnsupported }

// renderJob turns a run-to-completion plan into a RayJob that creates its
// own RayCluster: a head without TPUs and one TPU worker group per slice
// group; with Options.Cluster, a RayJob that runs on that existing
// RayCluster. The result passed validateJob; every problem found in the plan or
// the manifest comes back at once as a field.ErrorList.
func renderJob(p *placement.Plan, o settings) (*rayv1ac.RayJobApplyConfiguration, error) {
	if errs := o.validate(); len(errs) > 0 {
		return nil, errs
	}
	if err := checkPlan(p, o); err != nil {
		return nil, err
	}
	o = o.withDefaults(p)
	wd := o.WorkingDir
	if !shipsWorkingDir(p) {
		wd = nil
	}
	var cluster *rayv1ac.RayClusterSpecApplyConfiguration
	var errs field.ErrorList
	if o.Cluster == "" {
		cluster, errs = clusterSpec(p, o)
	} else if p.Capacity != (placement.Capacity{}) {
		errs = append(errs, field.Forbidden(field.NewPath("plan", "capacity"),
			"a RayJob on an existing cluster (options.cluster) provisions nothing: the RayCluster's own worker groups say where their nodes come from"))
	} else if shipsWorkingDir(p) && wd == nil {
		errs = append(errs, field.Required(field.NewPath("plan", "job", "runtimeEnv", "workingDir"),
			"a RayJob on an existing cluster ships raytpu's launcher in a packed working_dir (Render and Backend.Apply pack it when it is nil)"))
	}
	if wd != nil && wd.remote == "" && wd.Flat != (o.Cluster != "") {
		want := "a RayJob's own cluster mounts the zip, and Ray removes its top-level directory"
		if o.Cluster != "" {
			want = "on an existing cluster the submitter uploads the zip, which Ray unpacks as it is"
		}
		errs = append(errs, field.Invalid(field.NewPath("plan", "job", "runtimeEnv", "workingDir"), wd.Source, "packed for the other kind of RayJob ("+want+"): Render and Backend.Apply pack it right"))
	}
	entrypoint, err := jobEntrypoint(p, wd)
	if err != nil {
		return nil, err
	}
	env, err := runtimeEnvYAML(p, wd, o.Cluster != "")
	if err != nil {
		return nil, err
	}
	digest, err := planDigest(p)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if wd != nil {
		// The digest covers the files too: a changed directory is another run.
		digest = mixDigest(digest, wd.SHA256)
		if cluster != nil && wd.remote == "" {
			mountWorkingDir(cluster.HeadGroupSpec.Template, o.Name)
			for i := range cluster.WorkerGroupSpecs {
				mountWorkingDir(cluster.WorkerGroupSpecs[i].Template, o.Name)
			}
		}
	}
	metadata := maps.Clone(p.Job.Metadata)
	if metadata == nil {
		metadata = map[string]string{}
	}
	metadata[MetadataPlanDigest] = digest
	spec := rayv1ac.RayJobSpec().
		WithEntrypoint(entrypoint).
		WithSubmissionMode(rayv1.K8sJobMode).
		WithMetadata(metadata)
	if cluster != nil {
		spec.WithShutdownAfterJobFinishes(true).WithRayClusterSpec(cluster)
	} else {
		onExistingCluster(spec, o, wd)
	}
	if env != "" {
		spec.WithRuntimeEnvYAML(env)
	}
	if p.Job.EntrypointNumCPUs > 0 {
		spec.WithEntrypointNumCpus(float32(p.Job.EntrypointNumCPUs))
	}
	if len(p.Job.EntrypointResources) > 0 {
		b, err := json.Marshal(p.Job.EntrypointResources)
		if err != nil {
			return nil, fmt.Errorf("kuberay: encoding entrypoint resources: %w", err)
		}
		spec.WithEntrypointResources(string(b))
	}
	if o.ActiveDeadline > 0 {
		spec.WithActiveDeadlineSeconds(int32(max(1, o.ActiveDeadline.Round(time.Second)/time.Second)))
	}
	job := rayv1ac.RayJob(o.Name, o.Namespace).
		WithLabels(labels(p)).
		WithAnnotations(map[string]string{AnnotationPlanDigest: digest}).
		WithSpec(spec)
	queueJob(job, o.Queue)
	if err := validateJob(job); err != nil {
		return nil, err
	}
	return job, nil
}

// clusterSpec is the RayCluster of a plan: a head without TPUs and one TPU
// worker group per slice group.
func clusterSpec(p *placement.Plan, o settings) (*rayv1ac.RayClusterSpecApplyConfiguration, field.ErrorList) {
	if o.Cluster != "" {
		return nil, field.ErrorList{field.Forbidden(field.NewPath("options", "cluster"),
			"only a job (a RayJob) runs on an existing RayCluster; a Serve application's RayService and a slice plan's RayCluster make their own")}
	}
	_, errs := planCapacity(p, o.Options)
	groups := make([]*rayv1ac.WorkerGroupSpecApplyConfiguration, 0, len(p.Slices))
	names := make([]string, 0, len(p.Slices))
	for i, g := range p.Slices {
		wg, gerrs := workerGroup(p, i, g, o)
		errs = append(errs, gerrs...)
		groups = append(groups, wg)
		if wg != nil {
			names = append(names, deref(wg.GroupName))
		}
	}
	errs = append(errs, checkGroupNames(o.Autoscaling, names)...)
	if len(errs) > 0 {
		return nil, errs
	}
	headImage := defaultImage(o.RayVersion, o.PythonVersion)
	if o.Image != "" {
		headImage = o.Image
	}
	spec := rayv1ac.RayClusterSpec().
		WithRayVersion(o.RayVersion)
	if a := o.Autoscaling; a != nil {
		spec.WithEnableInTreeAutoscaling(true)
		if ao := autoscalerOptions(a); ao != nil {
			spec.WithAutoscalerOptions(ao)
		}
	}
	head := corev1ac.Container().WithName(HeadContainer).WithImage(headImage)
	if a := o.Autoscaling; a != nil {
		head.WithResources(corev1ac.ResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceCPU: cpuRequest(a.HeadCPU)}))
		if env := headAutoscalerEnv(a); len(env) > 0 {
			head.WithEnv(env...)
		}
	}
	return spec.
		WithHeadGroupSpec(rayv1ac.HeadGroupSpec().
			WithRayStartParams(map[string]string{}).
			WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
				WithContainers(head)))).
		WithWorkerGroupSpecs(groups...), nil
}

// labels are the labels of every object raytpu creates for plan p.
func labels(p *placement.Plan) map[string]string {
	return map[string]string{LabelManagedBy: FieldManager, LabelPlan: labelValue(p.Name)}
}

// checkPlan refuses plans this backend cannot run, before rendering.
func checkPlan(p *placement.Plan, o settings) error {
	if err := backend.CheckPlan(Name, p, backend.RunKinds()...); err != nil {
		return err
	}
	if len(p.Slices) == 0 {
		return fmt.Errorf("kuberay: %w: %w", backend.ErrUnsupported,
			field.ErrorList{field.Required(field.NewPath("plan", "slices"), "the KubeRay backend runs TPU plans: at least one slice group")})
	}
	if err := checkStorage(p); err != nil {
		return err
	}
	if wd := p.Job.RuntimeEnv.WorkingDir; isLocal(wd) && o.WorkingDir == nil {
		e := field.Invalid(field.NewPath("plan", "job", "runtimeEnv", "workingDir"), wd, "a local directory must be packed first (Render and Backend.Apply pack it), or use a remote URI (gs://, https://)")
		return fmt.Errorf("kuberay: %w: %w", ErrLocalWorkingDir, field.ErrorList{e})
	}
	for i, m := range p.Job.RuntimeEnv.PyModules {
		if !isURI(m) {
			e := field.Invalid(field.NewPath("plan", "job", "runtimeEnv", "pyModules").Index(i), m, "a local py_module cannot be shipped to a KubeRay cluster yet; use a remote URI")
			return fmt.Errorf("kuberay: %w: %w", ErrLocalWorkingDir, field.ErrorList{e})
		}
	}
	return nil
}

// workerGroup renders slice group i as one worker group: replicas count
// slices, numOfHosts the hosts of one slice, each pod one host.
func workerGroup(p *placement.Plan, i int, g *placement.SliceGroup, o settings) (*rayv1ac.WorkerGroupSpecApplyConfiguration, field.ErrorList) {
	path := field.NewPath("plan", "slices").Index(i)
	sl, errs := tpu.SliceSpec{Generation: g.Generation, Topology: g.Topology, ChipsPerHost: g.ChipsPerHost}.Resolve(tpu.TargetGKE, tpu.FieldsUnder(path))
	if len(errs) > 0 {
		return nil, errs
	}
	if sl.GKEAccelerator() == "" {
		return nil, field.ErrorList{field.Invalid(path.Child("generation"), g.Generation, "GKE offers no TPU node pools of this generation")}
	}
	if g.NumSlices < 1 {
		return nil, field.ErrorList{field.Invalid(path.Child("numSlices"), g.NumSlices, "at least 1")}
	}
	var env []*corev1ac.EnvVarApplyConfiguration
	if g.NumSlices > 1 {
		env = append(env, corev1ac.EnvVar().WithName(rayvocab.EnvMegascaleNumSlices).WithValue(strconv.Itoa(g.NumSlices)))
	}
	name := sl.PodType()
	// A Serve plan has one slice group per replica: indexing every group
	// makes more replicas append worker groups, which KubeRay applies to
	// the running RayCluster in place.
	if len(p.Slices) > 1 || p.Kind == placement.KindApplication {
		name += "-" + strconv.Itoa(i)
	}
	replicas, lo, hi, errs := groupBounds(o.Autoscaling, name, i, g, sl.Hosts())
	if len(errs) > 0 {
		return nil, errs
	}
	return tpuWorkerGroup(name, sl, replicas, lo, hi, env, hostResources(g, sl.ChipsPerHost), o), nil
}

// tpuWorkerGroup is a worker group of TPU hosts of slice shape sl: each
// replica is one slice of numOfHosts pods, each pod one host requesting
// its chips (google.com/tpu) on the slice's GKE node pool of the
// capacity class o.Capacity (and, autoscaled,
// its CPUs: see Autoscaling.WorkerCPU), with env and, when set, the Ray
// resources to advertise beyond Ray's TPU detection.
func tpuWorkerGroup(name string, sl *tpu.Slice, replicas, minReplicas, maxReplicas int32, env []*corev1ac.EnvVarApplyConfiguration, resources map[string]string, o settings) *rayv1ac.WorkerGroupSpecApplyConfiguration {
	image := defaultTPUImage(o.RayVersion, o.PythonVersion)
	if o.Image != "" {
		image = o.Image
	}
	chips := *resource.NewQuantity(int64(sl.ChipsPerHost), resource.DecimalSI)
	// Two maps: requests and limits must not alias.
	requests := corev1.ResourceList{tpu.ResourceGKETPU: chips}
	if a := o.Autoscaling; a != nil {
		requests[corev1.ResourceCPU] = cpuRequest(a.WorkerCPU)
	}
	c := corev1ac.Container().WithName(WorkerContainer).WithImage(image).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(requests).
			WithLimits(corev1.ResourceList{tpu.ResourceGKETPU: chips.DeepCopy()}))
	if len(env) > 0 {
		c.WithEnv(env...)
	}
	pod := corev1ac.PodSpec().
		WithNodeSelector(sl.GKENodeSelector()).
		WithContainers(c)
	withCapacity(pod, o.Capacity)
	wg := rayv1ac.WorkerGroupSpec().
		WithGroupName(name).
		WithReplicas(replicas).WithMinReplicas(minReplicas).WithMaxReplicas(maxReplicas).
		WithNumOfHosts(int32(sl.Hosts())).
		WithRayStartParams(map[string]string{}).
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(pod))
	if o.Autoscaling != nil && sl.Hosts() == 1 {
		// The autoscaler knows a group from its spec until one of its nodes
		// ran, and every TPU bundle asks for accelerator_type:TPU-<GEN>,
		// which Ray sets on each TPU host but no spec lists: a single-host
		// slice (no head reservation to scale on) would never leave zero.
		// Multi-host groups scale on their head reservations; placeable
		// bundles would add hosts, each of which KubeRay makes a whole
		// replica (TestAutoscalerFindsANodeTypeForEveryDemand).
		resources = maps.Clone(resources)
		if resources == nil {
			resources = map[string]string{}
		}
		resources[rayvocab.AcceleratorTypeResource(sl.RayAcceleratorType())] = "1"
	}
	if len(resources) > 0 {
		wg.WithResources(resources)
	}
	return wg
}

// hostResources are the Ray resources a host of slice group g must
// advertise beyond what Ray detects on a TPU host (TPU: its chips, the
// slice's name, its head resource and accelerator_type): a TPU amount other than the chips
// (TPUResourcePerChip) and the custom resources of its bundles, summed
// over the bundles one host holds. They go in the worker group's
// top-level resources, which KubeRay v1.5.0 passes to `ray start
// --resources` and Ray's autoscaler reads. CPU, memory and GPU come from
// the pod's own container resources and are left out. nil when there is
// nothing to add.
func hostResources(g *placement.SliceGroup, chipsPerHost int) map[string]string {
	perHost := 1.0
	if g.HostsPerSlice > 0 && g.BundlesPerSlice > g.HostsPerSlice {
		perHost = float64(g.BundlesPerSlice / g.HostsPerSlice)
	}
	out := map[string]string{}
	for k, v := range g.BundleResources {
		switch {
		case v <= 0, k == "CPU", k == "GPU", k == "memory", k == "object_store_memory",
			strings.HasSuffix(k, rayvocab.HeadResourceSuffix), strings.HasPrefix(k, rayvocab.AcceleratorTypePrefix):
		case k == rayvocab.ResourceTPU:
			if v*perHost != float64(chipsPerHost) {
				out[k] = placement.FormatNumber(v * perHost)
			}
		default:
			out[k] = placement.FormatNumber(v * perHost)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
