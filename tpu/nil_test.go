package tpu_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// A nil *Generation and a nil or zero *Slice answer zero values, never
// panic, and a zero Slice does not divide by its zero host size.
func TestNilAndZeroReceivers(t *testing.T) {
	var g *tpu.Generation
	topo := tpu.MustParseTopology("4x4")
	if got := g.CheckTopology(topo, tpu.TargetAny); got == "" {
		t.Error("nil Generation: CheckTopology accepted 4x4")
	}
	if e := g.CheckChipsPerHost(topo, 4, field.NewPath("chipsPerHost")); e == nil || e.Type != field.TypeInvalid || e.Field != "chipsPerHost" {
		t.Errorf("nil Generation: CheckChipsPerHost = %v, want Invalid at chipsPerHost", e)
	}
	if g.PodType(16) != "" || g.GCEAcceleratorType(16) != "" || g.RayAcceleratorType() != "" || g.MachineTypeFor(4) != "" {
		t.Error("nil Generation: a name is not empty")
	}
	if g.RayTopologies() != nil || g.GKETopologies() != nil || g.ValidTopologies(tpu.TargetAny) != nil {
		t.Error("nil Generation: a topology list is not nil")
	}
	if _, ok := g.TopologyForChips(16); ok || g.DefaultChipsPerHost(topo) != 0 {
		t.Error("nil Generation: TopologyForChips or DefaultChipsPerHost answered")
	}

	for name, s := range map[string]*tpu.Slice{"nil": nil, "zero": new(tpu.Slice), "no generation": {Topology: topo}} {
		if s.Hosts() != 0 || s.Devices() != 0 || s.DevicesPerHost() != 0 || s.HBMGiB() != 0 || s.PeakBF16TFLOPS() != 0 {
			t.Errorf("%s Slice: a count is not 0", name)
		}
		if s.PodType() != "" || s.HeadResource() != "" || s.GCEAcceleratorType() != "" || s.RayAcceleratorType() != "" || s.GKEAccelerator() != "" {
			t.Errorf("%s Slice: a name is not empty", name)
		}
		if s.GKENodeSelector() != nil {
			t.Errorf("%s Slice: GKENodeSelector is not nil", name)
		}
	}

	// A resolved slice still has at least one host.
	sl, errs := tpu.SliceSpec{Generation: "v6e", Topology: "2x2"}.Resolve(tpu.TargetAny, tpu.SliceFields{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if sl.Hosts() != 1 || sl.PodType() != "v6e-4" {
		t.Errorf("v6e 2x2: Hosts %d, PodType %q; want 1, v6e-4", sl.Hosts(), sl.PodType())
	}
}
