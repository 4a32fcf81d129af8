package sim_test

import (
	"bytes"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

func TestRenderSVG(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "2*v6e-16,v4-16,v6e-8,cpu:1")
	raw, err := c.PlaceBundles(sim.PlacementGroupRequest{Name: "per-chip", Strategy: placement.Spread, Bundles: repeat(8, map[string]float64{"TPU": 1})})
	if err != nil {
		t.Fatal(err)
	}
	v4, err := c.PlaceSlices(compile(t, placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", Name: "v4 <train>", ResourcesPerBundle: map[string]float64{"TPU": 2}}))
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"CPU": 1}), BundleLabelSelector: []map[string]string{{rayvocab.LabelTPUPodType: "!in(v6e-16,v4-16,v6e-8)"}}})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{Name: "waiting", Bundles: repeat(1, map[string]float64{"TPU": 8})})
	if err != nil || waiting.State != sim.StatePending {
		t.Fatalf("%v %+v", err, waiting)
	}
	var buf bytes.Buffer
	if err := sim.RenderSVG(&buf, c, raw, v4, cpu, waiting); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "render.golden.svg", buf.Bytes())

	var again bytes.Buffer
	if err := sim.RenderSVG(&again, c, raw, v4, cpu, waiting); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings differ")
	}
	if !bytes.Contains(buf.Bytes(), []byte("v4 &lt;train&gt;")) {
		t.Error("group name not escaped")
	}
}
