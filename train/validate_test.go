package train

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// The field rules of ScalingConfig and RunConfig, one error per broken
// rule in the order of the fields. The cases are the ones that proved the
// rules equal to the validate tags they replaced (the commit before the
// tags were deleted ran both).
func TestFieldRules(t *testing.T) {
	t.Parallel()
	type refs = []field.Ref
	inv, ns, req := field.TypeInvalid, field.TypeNotSupported, field.TypeRequired
	sc := func(name string, typ field.Type) field.Ref { return field.Ref{Field: "trainer.scaling." + name, Type: typ} }
	nan := math.NaN()
	scalings := []struct {
		s    ScalingConfig
		want refs
	}{
		{ScalingConfig{}, nil},
		{ScalingConfig{NumWorkers: 8, UseTPU: true, Accelerator: "v6e", Topology: "4x4", PlacementStrategy: placement.Pack}, nil},
		{ScalingConfig{NumWorkers: -1}, refs{sc("numWorkers", inv)}},
		{ScalingConfig{NumSlices: -1}, refs{sc("numSlices", inv)}},
		{ScalingConfig{ChipsPerHost: -4}, refs{sc("chipsPerHost", inv)}},
		{ScalingConfig{MinWorkers: -1}, refs{sc("minWorkers", inv)}},
		{ScalingConfig{MaxWorkers: -2}, refs{sc("maxWorkers", inv)}},
		{ScalingConfig{NumWorkers: math.MinInt, NumSlices: -3, ChipsPerHost: -1, MinWorkers: -5, MaxWorkers: -6},
			refs{sc("numWorkers", inv), sc("numSlices", inv), sc("chipsPerHost", inv), sc("minWorkers", inv), sc("maxWorkers", inv)}},
		{ScalingConfig{PlacementStrategy: "PACKED"}, refs{sc("placementStrategy", ns)}},
		{ScalingConfig{PlacementStrategy: "pack"}, refs{sc("placementStrategy", ns)}},
		{ScalingConfig{PlacementStrategy: placement.StrictSpread}, nil},
		{ScalingConfig{ResourcesPerWorker: map[string]float64{"TPU": 0, "CPU": 0}}, nil},
		{ScalingConfig{ResourcesPerWorker: map[string]float64{"TPU": -1, "CPU": -2, "b": 1, "a": nan, "z": math.Inf(-1)}},
			refs{sc("resourcesPerWorker[CPU]", inv), sc("resourcesPerWorker[TPU]", inv), sc("resourcesPerWorker[a]", inv), sc("resourcesPerWorker[z]", inv)}},
		{ScalingConfig{NumWorkers: -1, PlacementStrategy: "SPRED", ResourcesPerWorker: map[string]float64{"memory": -1}, MaxWorkers: -1},
			refs{sc("numWorkers", inv), sc("resourcesPerWorker[memory]", inv), sc("placementStrategy", ns), sc("maxWorkers", inv)}},
	}
	root := scalingPath
	for _, c := range scalings {
		got := c.s.validateFields(root)
		if diff := cmp.Diff(c.want, field.Refs(got.Err())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.s, diff)
		}
		if c.s.fieldsHold() != (len(got) == 0) {
			t.Errorf("%+v: fieldsHold = %v with %v", c.s, c.s.fieldsHold(), got)
		}
	}
	rn := func(name string, typ field.Type) field.Ref { return field.Ref{Field: "trainer.run." + name, Type: typ} }
	runs := []struct {
		r    RunConfig
		want refs
	}{
		{RunConfig{}, refs{rn("name", req)}},
		{RunConfig{Name: "ok"}, nil},
		{RunConfig{Name: "  \t"}, refs{rn("name", req)}},
		{RunConfig{Name: "a/b"}, refs{rn("name", inv)}},
		{RunConfig{Name: `a\b`}, refs{rn("name", inv)}},
		{RunConfig{Name: "/"}, refs{rn("name", inv)}},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: -1}}, refs{rn("checkpoint.numToKeep", inv)}},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: 3, ScoreOrder: "min"}}, nil},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "mx"}}, refs{rn("checkpoint.scoreOrder", ns)}},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "MAX"}}, refs{rn("checkpoint.scoreOrder", ns)}},
		{RunConfig{Name: "ok", Failure: FailureConfig{MaxFailures: -1}}, nil},
		{RunConfig{Name: "ok", Failure: FailureConfig{MaxFailures: -2}}, refs{rn("failure.maxFailures", inv)}},
		{RunConfig{Checkpoint: CheckpointConfig{NumToKeep: -1, ScoreOrder: "mx"}, Failure: FailureConfig{MaxFailures: -2}},
			refs{rn("name", req), rn("checkpoint.numToKeep", inv), rn("checkpoint.scoreOrder", ns), rn("failure.maxFailures", inv)}},
		{RunConfig{Name: "x/", Checkpoint: CheckpointConfig{NumToKeep: math.MinInt}, Failure: FailureConfig{MaxFailures: math.MinInt}},
			refs{rn("name", inv), rn("checkpoint.numToKeep", inv), rn("failure.maxFailures", inv)}},
	}
	for _, c := range runs {
		if diff := cmp.Diff(c.want, field.Refs(c.r.validateFields(runPath).Err())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.r, diff)
		}
	}
}
