package kubesim_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/kuberay/kubesim"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

func v4Plan(t *testing.T, slices int) *placement.Plan {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: slices}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return placement.NewSlicePlan("train", g)
}

func TestPredict(t *testing.T) {
	group := kuberay.SliceGroup{Name: "v4-16", PodType: "v4-16", Topology: "2x2x2", Hosts: 2, ChipsPerHost: 4, Replicas: 2, MinReplicas: 0, MaxReplicas: 3}
	fixed := &kuberay.ClusterSlices{Namespace: "ml", Name: "fixed", Groups: []kuberay.SliceGroup{group}}
	v1 := &kuberay.ClusterSlices{Namespace: "ml", Name: "v1", Autoscaled: true, AutoscalerVersion: kuberay.AutoscalerV1, Groups: []kuberay.SliceGroup{group}}
	v2 := &kuberay.ClusterSlices{Namespace: "ml", Name: "v2", Autoscaled: true, AutoscalerVersion: kuberay.AutoscalerV2, Groups: []kuberay.SliceGroup{group}}
	for _, c := range []struct {
		name    string
		cs      *kuberay.ClusterSlices
		slices  int
		version sim.AutoscalerVersion
		to      []int  // each autoscaled group's slices after the plan
		errCode string // the error finding, or none
	}{
		// Not autoscaled: the bounds are not the cluster's, the slices it has are.
		{"fixed, enough slices", fixed, 2, sim.AutoscalerV1, nil, ""},
		{"fixed, one slice short", fixed, 3, sim.AutoscalerV1, nil, sim.CodeNotAutoscaled},
		{"v1 grows the group", v1, 3, sim.AutoscalerV1, []int{3}, ""},
		{"v1 stops at its max", v1, 4, sim.AutoscalerV1, []int{3}, sim.CodeMaxSlicesTooSmall},
		{"v2 starts no multi-host slice", v2, 3, sim.AutoscalerV2, []int{2}, sim.CodeV2MultiHost},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := kubesim.Version(c.cs); got != c.version {
				t.Errorf("Version = %s, want %s", got, c.version)
			}
			spec := kubesim.Spec(c.cs)
			if len(spec.Items) != 1 || spec.Items[0].Count != 2 || spec.Items[0].Autoscaled() != c.cs.Autoscaled {
				t.Errorf("Spec = %+v, want one item of 2 slices, autoscaled %v", spec, c.cs.Autoscaled)
			}
			pred, err := kubesim.Predict(c.cs, v4Plan(t, c.slices))
			if err != nil {
				t.Fatal(err)
			}
			var to []int
			for _, g := range pred.Groups {
				to = append(to, g.To)
			}
			if len(to) != len(c.to) || len(to) > 0 && to[0] != c.to[0] {
				t.Errorf("groups end at %v slices, want %v", to, c.to)
			}
			err = pred.Err()
			switch {
			case c.errCode == "" && err != nil:
				t.Errorf("Err = %v, want none", err)
			case c.errCode != "" && (err == nil || !strings.Contains(err.Error(), c.errCode)):
				t.Errorf("Err = %v, want %s", err, c.errCode)
			}
		})
	}
}

// Predict and Check refuse nil inputs with an error, never a panic.
func TestNilInputs(t *testing.T) {
	t.Parallel()
	if _, err := kubesim.Predict(nil, nil); err == nil {
		t.Error("Predict(nil, nil) succeeded")
	}
	if err := kubesim.Check(nil, nil); err == nil {
		t.Error("Check(nil, nil) succeeded")
	}
	if err := kubesim.Check(&kuberay.ClusterSlices{}, nil); err == nil {
		t.Error("Check(cs, nil) succeeded")
	}
}
