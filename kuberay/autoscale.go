package kuberay

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Upscaling modes of Ray's autoscaler (spec.autoscalerOptions.upscalingMode).
// Ray 2.60's KubeRay config (autoscaling_config.py,
// _derive_autoscaling_config_from_ray_cr) turns Conservative into
// upscaling_speed 1 and the other two into 1000: Conservative launches at
// most max(5, running nodes of the type) pods of a group at once, the others
// are not rate-limited.
const (
	UpscalingDefault      = string(rayv1.UpscalingMode("Default"))
	UpscalingConservative = string(rayv1.UpscalingMode("Conservative"))
	UpscalingAggressive   = string(rayv1.UpscalingMode("Aggressive"))
)

// Autoscaler versions (spec.autoscalerOptions.version).
const (
	AutoscalerV1 = string(rayv1.AutoscalerVersionV1)
	AutoscalerV2 = string(rayv1.AutoscalerVersionV2)
)

// DefaultAutoscaledCPU is the CPUs of a head or TPU host pod of an
// autoscaled RayCluster when Autoscaling leaves them unset: the CPUs per
// host package sim's predictions take (sim.DefaultCPU).
const DefaultAutoscaledCPU = 8

// DefaultIdleTimeout is how long Ray's autoscaler lets a worker idle before
// it removes it when spec.autoscalerOptions.idleTimeoutSeconds is unset.
const DefaultIdleTimeout = 60 * time.Second

// Autoscaling renders Ray's in-tree autoscaler on the RayCluster of a
// RayJob, RayService or RayCluster (spec.enableInTreeAutoscaling: true):
// KubeRay adds the autoscaler container to the head pod, and the autoscaler
// adds and removes replicas of the TPU worker groups between their min and
// max as the cluster's pending work asks. A replica of a TPU worker group
// is one whole slice, numOfHosts pods, so the bounds count slices.
//
// Which autoscaler runs: Ray 2.60's `ray start --head` turns on
// autoscaler v2 by default under KubeRay (scripts.py sets
// RAY_enable_autoscaler_v2=1 when KubeRay's RAY_USAGE_STATS_KUBERAY_IN_USE,
// RAY_CLOUD_INSTANCE_ID and RAY_NODE_TYPE_NAME are in the head's
// environment, which KubeRay v1.5.0 always sets), unless the head's
// environment sets RAY_enable_autoscaler_v2 itself. v2 does not start a
// multi-host TPU slice: it places the slice's head reservation
// (TPU-<pod type>-head) only on a node type whose static labels carry
// ray.io/tpu-worker-id, and its KubeRay provider rounds hosts down to
// whole replicas (a v4 2x2x2 group at min 0 stays at 0 with the
// reservation pending). v1 is the one that scales such a group from zero:
// it launches one host for the pending head reservation and its KubeRay
// node provider writes the pod count as replicas, which makes one slice
// (see package sim, PredictAutoscaling). So raytpu runs v1 unless Version
// is v2: it sets RAY_enable_autoscaler_v2=0 on the head container (and
// leaves spec.autoscalerOptions.version unset, which KubeRay refuses
// together with that variable); for v2 it sets the version, and KubeRay
// sets the variable to true.
type Autoscaling struct {
	// IdleTimeout is how long a worker pod may hold no Ray work before the
	// autoscaler removes it (whole seconds, spec.autoscalerOptions.
	// idleTimeoutSeconds). A multi-host slice goes as a whole. 0: the
	// autoscaler's default, DefaultIdleTimeout.
	IdleTimeout time.Duration `json:"idleTimeout,omitempty"`
	// UpscalingMode is UpscalingDefault, UpscalingConservative or
	// UpscalingAggressive; empty leaves it to the autoscaler (Default).
	UpscalingMode string `json:"upscalingMode,omitempty"`
	// Version is AutoscalerV1 or AutoscalerV2; empty is v1 (not Ray
	// 2.60's default under KubeRay, v2: see above).
	Version string `json:"version,omitempty"`
	// MinSlices and MaxSlices bound every TPU worker group, in slices
	// (replicas). The group starts at MinSlices. Default: 0, and the
	// slices the plan's group needs.
	MinSlices int `json:"minSlices,omitempty"`
	MaxSlices int `json:"maxSlices,omitempty"`
	// HeadCPU and WorkerCPU are the CPUs of the head pod and of each TPU
	// host pod, rendered as the Ray container's CPU request. Ray's
	// autoscaler needs them: Ray 2.60's KubeRay config
	// (autoscaling_config.py, _get_num_cpus) refuses a group whose CPUs it
	// finds neither in rayStartParams num-cpus nor in the Ray container's
	// CPU limit or request, and the autoscaler exits. KubeRay v1.5.0 also
	// passes the request to `ray start --num-cpus`, so it is the pod's
	// Ray CPU resource too. 0: DefaultAutoscaledCPU.
	HeadCPU   int `json:"headCPU,omitempty"`
	WorkerCPU int `json:"workerCPU,omitempty"`
	// Groups overrides the bounds of single worker groups, by group name
	// (as rendered: the pod type, v4-16, with -<index> when the plan has
	// several slice groups or is a Serve application).
	Groups map[string]SliceRange `json:"groups,omitempty"`
}

// SliceRange bounds one worker group in slices; a zero Max means the
// slices the plan's group needs.
type SliceRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// upscalingModes and autoscalerVersions are the values KubeRay's CRD takes.
var (
	upscalingModes     = []string{UpscalingDefault, UpscalingConservative, UpscalingAggressive}
	autoscalerVersions = []string{AutoscalerV1, AutoscalerV2}
)

// checkAutoscaling reports what is wrong with a, alone: bounds that are
// negative, out of int32 or crossed, a timeout that is negative, not whole
// seconds or too long, a mode or version KubeRay's CRD refuses.
func checkAutoscaling(a *Autoscaling, root *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case a.IdleTimeout < 0:
		errs = append(errs, field.Invalid(root.Child("idleTimeout"), a.IdleTimeout.String(), "must be 0 (the autoscaler's default, 60s) or positive"))
	case a.IdleTimeout%time.Second != 0:
		errs = append(errs, field.Invalid(root.Child("idleTimeout"), a.IdleTimeout.String(), "whole seconds: KubeRay takes idleTimeoutSeconds"))
	case a.IdleTimeout/time.Second > math.MaxInt32:
		errs = append(errs, field.Invalid(root.Child("idleTimeout"), a.IdleTimeout.String(), fmt.Sprintf("at most %d seconds (int32)", math.MaxInt32)))
	}
	if a.UpscalingMode != "" && !slices.Contains(upscalingModes, a.UpscalingMode) {
		errs = append(errs, field.NotSupported(root.Child("upscalingMode"), a.UpscalingMode, upscalingModes))
	}
	if a.Version != "" && !slices.Contains(autoscalerVersions, a.Version) {
		errs = append(errs, field.NotSupported(root.Child("version"), a.Version, autoscalerVersions).WithDetail("or empty: v1"))
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"headCPU", a.HeadCPU}, {"workerCPU", a.WorkerCPU}} {
		if c.v < 0 || c.v > math.MaxInt32 {
			errs = append(errs, field.Invalid(root.Child(c.name), c.v, fmt.Sprintf("CPUs from 1 to %d, or 0 for %d", math.MaxInt32, DefaultAutoscaledCPU)))
		}
	}
	errs = append(errs, checkRange(a.MinSlices, a.MaxSlices, root.Child("minSlices"), root.Child("maxSlices"))...)
	for _, name := range slices.Sorted(maps.Keys(a.Groups)) {
		r := a.Groups[name]
		p := root.Child("groups").Key(name)
		errs = append(errs, checkRange(r.Min, r.Max, p.Child("min"), p.Child("max"))...)
	}
	return errs
}

func checkRange(lo, hi int, loPath, hiPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if lo < 0 || lo > math.MaxInt32 {
		errs = append(errs, field.Invalid(loPath, lo, fmt.Sprintf("slices from 0 to %d", math.MaxInt32)))
	}
	if hi < 0 || hi > math.MaxInt32 {
		errs = append(errs, field.Invalid(hiPath, hi, fmt.Sprintf("slices from 1 to %d, or 0 for the slices the plan needs", math.MaxInt32)))
	}
	if hi > 0 && lo > hi {
		errs = append(errs, field.Invalid(loPath, lo, fmt.Sprintf("must not exceed %s (%d)", hiPath, hi)))
	}
	return errs
}

// groupBounds are the min, max and starting replicas of worker group name,
// which holds slice group i of the plan, and the errors of the bounds
// against what the plan needs. Without autoscaling every bound is the
// plan's slices.
func groupBounds(a *Autoscaling, name string, i int, g *placement.SliceGroup, hosts int) (replicas, lo, hi int32, errs field.ErrorList) {
	n := int32(g.NumSlices)
	if a == nil {
		return n, n, n, nil
	}
	minS, maxS := a.MinSlices, a.MaxSlices
	minPath, maxPath := field.NewPath("options", "autoscaling", "minSlices"), field.NewPath("options", "autoscaling", "maxSlices")
	if r, ok := a.Groups[name]; ok {
		minS, maxS = r.Min, r.Max
		p := field.NewPath("options", "autoscaling", "groups").Key(name)
		minPath, maxPath = p.Child("min"), p.Child("max")
	}
	if maxS == 0 {
		maxS = g.NumSlices
	}
	switch {
	case maxS < g.NumSlices:
		errs = append(errs, field.Invalid(maxPath, maxS, fmt.Sprintf("worker group %s (plan.slices[%d], %s %s) needs %d slices at once: at least %d", name, i, g.PodType, g.Topology, g.NumSlices, g.NumSlices)))
	case minS > maxS:
		errs = append(errs, field.Invalid(minPath, minS, fmt.Sprintf("must not exceed the max slices of worker group %s (%d)", name, maxS)))
	case int64(maxS)*int64(hosts) > math.MaxInt32:
		errs = append(errs, field.Invalid(maxPath, maxS, fmt.Sprintf("%d slices of %d hosts are more pods than KubeRay counts (int32): at most %d", maxS, hosts, math.MaxInt32/hosts)))
	}
	return int32(minS), int32(minS), int32(maxS), errs
}

// checkGroupNames refuses per-group bounds for groups the plan does not
// render, naming the ones it does.
func checkGroupNames(a *Autoscaling, names []string) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(a.Groups)) {
		if !slices.Contains(names, name) {
			errs = append(errs, field.NotSupported(field.NewPath("options", "autoscaling", "groups").Key(name), name, names).
				WithDetail("the plan's TPU worker groups"))
		}
	}
	return errs
}

// autoscalerOptions is spec.autoscalerOptions for a, nil when a sets none.
func autoscalerOptions(a *Autoscaling) *rayv1ac.AutoscalerOptionsApplyConfiguration {
	if a.IdleTimeout == 0 && a.UpscalingMode == "" && a.Version != AutoscalerV2 {
		return nil
	}
	o := rayv1ac.AutoscalerOptions()
	if a.IdleTimeout > 0 {
		o.WithIdleTimeoutSeconds(int32(a.IdleTimeout / time.Second))
	}
	if a.UpscalingMode != "" {
		o.WithUpscalingMode(rayv1.UpscalingMode(a.UpscalingMode))
	}
	if a.Version == AutoscalerV2 {
		o.WithVersion(rayv1.AutoscalerVersion(a.Version))
	}
	return o
}

// cpuRequest is the CPU request of an autoscaled pod: n, or
// DefaultAutoscaledCPU when n is 0.
func cpuRequest(n int) resource.Quantity {
	if n == 0 {
		n = DefaultAutoscaledCPU
	}
	return *resource.NewQuantity(int64(n), resource.DecimalSI)
}

// headAutoscalerEnv is the head container's environment that picks the
// autoscaler: RAY_enable_autoscaler_v2=0 unless a asks for v2 (KubeRay
// then sets it to true from spec.autoscalerOptions.version).
func headAutoscalerEnv(a *Autoscaling) []*corev1ac.EnvVarApplyConfiguration {
	if a == nil || a.Version == AutoscalerV2 {
		return nil
	}
	return []*corev1ac.EnvVarApplyConfiguration{corev1ac.EnvVar().WithName(envAutoscalerV2).WithValue("0")}
}
