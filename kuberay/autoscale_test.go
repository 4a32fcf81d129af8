package kuberay_test

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// autoscaleCases are the autoscaled objects whose manifests are golden
// files (testdata/autoscale, apart from the manifests the kube tests
// apply): a RayJob, a RayService and a RayCluster.
func autoscaleCases(t *testing.T) map[string]struct {
	plan *placement.Plan
	opts kuberay.Options
} {
	return map[string]struct {
		plan *placement.Plan
		opts kuberay.Options
	}{
		// The scenario: a v4 2x2x2 group from 0 to 2 slices.
		"rayjob-v4-2x2x2-min0-max2": {compile(t, trainer("v4", "2x2x2", 1)), kuberay.Options{Autoscaling: &kuberay.Autoscaling{
			MaxSlices: 2, IdleTimeout: 30 * time.Second, UpscalingMode: kuberay.UpscalingConservative}}},
		// A single-host slice: its group lists accelerator_type:TPU-V6E.
		"rayjob-v6e-2x4-single-host": {compile(t, trainer("v6e", "2x4", 1)), kuberay.Options{Autoscaling: &kuberay.Autoscaling{MaxSlices: 2}}},
		// Two slices at once, v1 named, max defaulting to the plan's 2.
		"rayjob-v6e-4x4-two-slices-v1": {compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{Autoscaling: &kuberay.Autoscaling{Version: kuberay.AutoscalerV1}}},
		// A replica's slice per worker group, each from 0 to 1; one kept warm.
		"rayservice-chat-v4": {compileApp(t, chatApp(1, nil)), kuberay.Options{Autoscaling: &kuberay.Autoscaling{
			Groups: map[string]kuberay.SliceRange{"v4-16-0": {Min: 1, Max: 1}}}}},
		"raycluster-v6e-4x4-max3": {slicePlan(t, "reserve", 1), kuberay.Options{Autoscaling: &kuberay.Autoscaling{MaxSlices: 3, IdleTimeout: 10 * time.Minute}}},
	}
}

// Autoscaled objects render byte-identically, pass Validate and pass
// KubeRay v1.5.0's own validation (utils.Validate*Spec, run here on the
// typed objects the manifests decode to); each worker group starts at its
// min, has its max, and a replica is still one whole slice.
func TestRenderAutoscalingGolden(t *testing.T) {
	t.Parallel()
	for name, c := range autoscaleCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			obj, err := kuberay.RenderPlan(c.plan, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			y, err := kuberay.MarshalYAML(obj)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("autoscale", name+".golden.yaml"), y)
			again, err := kuberay.RenderPlan(c.plan, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if y2, _ := kuberay.MarshalYAML(again); string(y2) != string(y) {
				t.Error("two renders of one plan differ")
			}
			spec := kubeRayCheck(t, y)
			if !utils.IsAutoscalingEnabled(spec) {
				t.Error("enableInTreeAutoscaling is not true")
			}
			a := c.opts.Autoscaling
			for i, g := range spec.WorkerGroupSpecs {
				lo, hi := int32(a.MinSlices), int32(a.MaxSlices)
				if r, ok := a.Groups[g.GroupName]; ok {
					lo, hi = int32(r.Min), int32(r.Max)
				}
				if hi == 0 {
					hi = int32(c.plan.Slices[i].NumSlices)
				}
				if *g.MinReplicas != lo || *g.MaxReplicas != hi || *g.Replicas != lo {
					t.Errorf("group %s: replicas %d min %d max %d, want %d, %d, %d", g.GroupName, *g.Replicas, *g.MinReplicas, *g.MaxReplicas, lo, lo, hi)
				}
				if g.NumOfHosts != int32(c.plan.Slices[i].HostsPerSlice) {
					t.Errorf("group %s: numOfHosts %d, want the %d hosts of one slice", g.GroupName, g.NumOfHosts, c.plan.Slices[i].HostsPerSlice)
				}
			}
		})
	}
}

// kubeRayCheck decodes a rendered manifest into KubeRay's typed object,
// runs KubeRay's validation of it and returns its RayCluster spec.
func kubeRayCheck(t *testing.T, y []byte) *rayv1.RayClusterSpec {
	t.Helper()
	switch o := typed(t, y).(type) {
	case *rayv1.RayJob:
		if err := errors.Join(utils.ValidateRayJobMetadata(o.ObjectMeta), utils.ValidateRayJobSpec(o)); err != nil {
			t.Fatalf("KubeRay refuses the RayJob: %v", err)
		}
		return o.Spec.RayClusterSpec
	case *rayv1.RayService:
		if err := errors.Join(utils.ValidateRayServiceMetadata(o.ObjectMeta), utils.ValidateRayServiceSpec(o)); err != nil {
			t.Fatalf("KubeRay refuses the RayService: %v", err)
		}
		return &o.Spec.RayClusterSpec
	case *rayv1.RayCluster:
		if err := errors.Join(utils.ValidateRayClusterMetadata(o.ObjectMeta), utils.ValidateRayClusterSpec(&o.Spec, o.Annotations)); err != nil {
			t.Fatalf("KubeRay refuses the RayCluster: %v", err)
		}
		return &o.Spec
	}
	t.Fatal("not a KubeRay object")
	return nil
}

// typed decodes a rendered manifest into KubeRay's typed object of its
// kind, as the operator reads it.
func typed(t *testing.T, y []byte) any {
	t.Helper()
	var head struct{ Kind string }
	if err := yaml.Unmarshal(y, &head); err != nil {
		t.Fatal(err)
	}
	var obj any
	switch head.Kind {
	case kuberay.KindRayJob:
		obj = &rayv1.RayJob{}
	case kuberay.KindRayService:
		obj = &rayv1.RayService{}
	case kuberay.KindRayCluster:
		obj = &rayv1.RayCluster{}
	default:
		t.Fatalf("kind %q", head.Kind)
	}
	if err := yaml.UnmarshalStrict(y, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// Bad autoscaling options are refused by Render and by New, each error at
// its option's path with the bad value and what is valid.
func TestAutoscalingOptionErrors(t *testing.T) {
	t.Parallel()
	two := compile(t, trainer("v4", "2x2x2", 2))
	cases := []struct {
		name     string
		a        kuberay.Autoscaling
		field    string
		says     []string
		planOnly bool // an error only against a plan (New cannot see it)
	}{
		{"max below the plan's slices", kuberay.Autoscaling{MaxSlices: 1}, "options.autoscaling.maxSlices", []string{"1", "v4-16", "needs 2 slices", "at least 2"}, true},
		{"min above max", kuberay.Autoscaling{MinSlices: 3, MaxSlices: 2}, "options.autoscaling.minSlices", []string{"3", "must not exceed", "(2)"}, false},
		{"min above the default max", kuberay.Autoscaling{MinSlices: 3}, "options.autoscaling.minSlices", []string{"3", "max slices of worker group v4-16 (2)"}, true},
		{"negative min", kuberay.Autoscaling{MinSlices: -1}, "options.autoscaling.minSlices", []string{"-1", "from 0"}, false},
		{"max past int32", kuberay.Autoscaling{MaxSlices: math.MaxInt32 + 1}, "options.autoscaling.maxSlices", []string{"2147483648", "2147483647"}, false},
		{"more pods than int32", kuberay.Autoscaling{MaxSlices: math.MaxInt32}, "options.autoscaling.maxSlices", []string{"2147483647", "2 hosts", "at most 1073741823"}, true},
		{"negative idle timeout", kuberay.Autoscaling{IdleTimeout: -time.Second}, "options.autoscaling.idleTimeout", []string{`"-1s"`, "60s"}, false},
		{"idle timeout in milliseconds", kuberay.Autoscaling{IdleTimeout: 1500 * time.Millisecond}, "options.autoscaling.idleTimeout", []string{`"1.5s"`, "whole seconds"}, false},
		{"lower-case mode", kuberay.Autoscaling{UpscalingMode: "conservative"}, "options.autoscaling.upscalingMode", []string{`"conservative"`, "Conservative", "Aggressive", "Default"}, false},
		{"version v3", kuberay.Autoscaling{Version: "v3"}, "options.autoscaling.version", []string{`"v3"`, "v1", "v2"}, false},
		{"negative head CPUs", kuberay.Autoscaling{HeadCPU: -2}, "options.autoscaling.headCPU", []string{"-2", "from 1", "0 for 8"}, false},
		{"worker CPUs past int32", kuberay.Autoscaling{WorkerCPU: math.MaxInt32 + 1}, "options.autoscaling.workerCPU", []string{"2147483648", "2147483647"}, false},
		{"a group the plan lacks", kuberay.Autoscaling{Groups: map[string]kuberay.SliceRange{"v4-32": {Max: 2}}}, "options.autoscaling.groups[v4-32]", []string{`"v4-32"`, `"v4-16"`}, true},
		{"a group's crossed bounds", kuberay.Autoscaling{Groups: map[string]kuberay.SliceRange{"v4-16": {Min: 2, Max: 1}}}, "options.autoscaling.groups[v4-16].min", []string{"2", "(1)"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := c.a
			job, err := kuberay.RenderJob(two, kuberay.Options{Autoscaling: &a})
			if job != nil || err == nil {
				t.Fatalf("Render = %v; want an error", err)
			}
			if got := fields(err); len(got) != 1 || got[0] != c.field {
				t.Errorf("Render: fields %v, want [%s] (%v)", got, c.field, err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			_, err = kuberay.New(noCluster, kuberay.WithOptions(kuberay.Options{Autoscaling: &a}))
			if got := fields(err); c.planOnly != (len(got) == 0) || (!c.planOnly && got[0] != c.field) {
				t.Errorf("New: fields %v (plan-only %v): %v", got, c.planOnly, err)
			}
		})
	}
}

// Each autoscaler rule, broken on a rendered autoscaled job, is reported
// at its manifest path; where KubeRay v1.5.0 has the same rule its own
// validation refuses the object too.
func TestValidateAutoscalerRules(t *testing.T) {
	t.Parallel()
	spec := "spec.rayClusterSpec"
	group := spec + ".workerGroupSpecs[0]"
	// The rendered head sets RAY_enable_autoscaler_v2=0 (v1): headEnv
	// replaces it, noHeadEnv drops it.
	noHeadEnv := func(j *rayv1ac.RayJobApplyConfiguration) {
		j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Env = nil
	}
	headEnv := func(j *rayv1ac.RayJobApplyConfiguration, v string) {
		noHeadEnv(j)
		j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].WithEnv(corev1ac.EnvVar().WithName("RAY_enable_autoscaler_v2").WithValue(v))
	}
	cases := map[string]struct {
		edit    func(*rayv1ac.RayJobApplyConfiguration)
		want    []string
		kuberay bool // KubeRay's ValidateRayJobSpec refuses it as well
	}{
		"options without autoscaling": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WithEnableInTreeAutoscaling(false)
		}, []string{spec + ".autoscalerOptions"}, false},
		"v2 env without autoscaling": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WithEnableInTreeAutoscaling(false).AutoscalerOptions = nil
			headEnv(j, "true")
		}, []string{spec + ".headGroupSpec.template.spec.containers[0].env[RAY_enable_autoscaler_v2]"}, true},
		"v2 env and version": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.AutoscalerOptions.WithVersion(rayv1.AutoscalerVersionV1)
			headEnv(j, "1")
		},
			[]string{spec + ".headGroupSpec.template.spec.containers[0].env[RAY_enable_autoscaler_v2]"}, true},
		"unknown mode and negative timeout": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.AutoscalerOptions.WithUpscalingMode("Eager").WithIdleTimeoutSeconds(-5)
		}, []string{spec + ".autoscalerOptions.upscalingMode", spec + ".autoscalerOptions.idleTimeoutSeconds"}, false},
		"v2 with a restarting head": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.AutoscalerOptions.WithVersion(rayv1.AutoscalerVersionV2)
			noHeadEnv(j)
			j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.WithRestartPolicy(corev1.RestartPolicyAlways)
		}, []string{spec + ".headGroupSpec.template.spec.restartPolicy"}, true},
		"min above max": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].WithMinReplicas(4)
		}, []string{group + ".minReplicas"}, false},
		"megascale past max": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].WithMaxReplicas(1).WithMinReplicas(0).WithReplicas(0)
		}, []string{group + ".template.spec.containers[0].env[MEGASCALE_NUM_SLICES]"}, false},
		"suspended group": {func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].WithSuspend(true)
		}, []string{group + ".suspend"}, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			job, err := kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{Autoscaling: &kuberay.Autoscaling{
				MaxSlices: 3, Version: kuberay.AutoscalerV1, IdleTimeout: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			c.edit(job)
			if got := fields(kuberay.Validate(job)); !slices.Equal(got, c.want) {
				t.Errorf("fields %v, want %v", got, c.want)
			}
			y, err := kuberay.MarshalYAML(job)
			if err != nil {
				t.Fatal(err)
			}
			kerr := utils.ValidateRayJobSpec(typed(t, y).(*rayv1.RayJob))
			if c.kuberay != (kerr != nil) {
				t.Errorf("KubeRay's ValidateRayJobSpec: %v; want it to refuse: %v", kerr, c.kuberay)
			}
		})
	}
}

// Any bounds, timeout and mode either render an object that Validate and
// KubeRay accept, every group within min <= replicas <= max and max
// covering the plan, or are refused with field errors under
// Options.Autoscaling only.
func FuzzAutoscalingOptions(f *testing.F) {
	f.Add(0, 2, int64(30), "Conservative", "", "")
	f.Add(1, 1, int64(0), "", "v1", "v4-16")
	f.Add(3, 2, int64(-1), "eager", "v3", "v4-32")
	f.Add(0, 1, int64(1500), "Default", "v2", "")
	p, err := trainer("v4", "2x2x2", 2).Compile()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, lo, hi int, idleMillis int64, mode, version, group string) {
		a := &kuberay.Autoscaling{MinSlices: lo, MaxSlices: hi, IdleTimeout: time.Duration(idleMillis) * time.Millisecond, UpscalingMode: mode, Version: version}
		if group != "" {
			a.Groups = map[string]kuberay.SliceRange{group: {Min: lo, Max: hi + 1}}
		}
		job, err := kuberay.RenderJob(p, kuberay.Options{Autoscaling: a})
		if err != nil {
			for _, e := range field.Errors(err) {
				if !strings.HasPrefix(e.Field, "options.autoscaling") {
					t.Fatalf("error outside Options.Autoscaling: %v", e)
				}
			}
			if len(field.Errors(err)) == 0 {
				t.Fatalf("not a field error: %v", err)
			}
			return
		}
		if err := kuberay.Validate(job); err != nil {
			t.Fatalf("rendered but invalid: %v", err)
		}
		y, err := kuberay.MarshalYAML(job)
		if err != nil {
			t.Fatal(err)
		}
		if err := utils.ValidateRayJobSpec(typed(t, y).(*rayv1.RayJob)); err != nil {
			t.Fatalf("KubeRay refuses it: %v", err)
		}
		for _, g := range job.Spec.RayClusterSpec.WorkerGroupSpecs {
			if !(*g.MinReplicas <= *g.Replicas && *g.Replicas <= *g.MaxReplicas) || *g.MaxReplicas < 2 {
				t.Fatalf("group %s: replicas %d min %d max %d", *g.GroupName, *g.Replicas, *g.MinReplicas, *g.MaxReplicas)
			}
		}
	})
}
