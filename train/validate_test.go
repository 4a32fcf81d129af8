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
	sc := func(name string, typ field.Type) field.Ref {
		return field.Ref{Field: "trainer.scaling_config." + name, Type: typ}
	}
	nan := math.NaN()
	scalings := []struct {
		s    ScalingConfig
		want refs
	}{
		{ScalingConfig{}, nil},
		{ScalingConfig{NumWorkers: 8, UseTPU: true, Accelerator: "v6e", Topology: "4x4", PlacementStrategy: placement.Pack}, nil},
		{ScalingConfig{NumWorkers: -1}, refs{sc("num_workers", inv)}},
		{ScalingConfig{NumSlices: -1}, refs{sc("num_slices", inv)}},
		{ScalingConfig{ChipsPerHost: -4}, refs{sc("chips_per_host", inv)}},
		{ScalingConfig{MinWorkers: -1}, refs{sc("min_workers", inv)}},
		{ScalingConfig{MaxWorkers: -2}, refs{sc("max_workers", inv)}},
		{ScalingConfig{NumWorkers: math.MinInt, NumSlices: -3, ChipsPerHost: -1, MinWorkers: -5, MaxWorkers: -6},
			refs{sc("num_workers", inv), sc("num_slices", inv), sc("chips_per_host", inv), sc("min_workers", inv), sc("max_workers", inv)}},
		{ScalingConfig{PlacementStrategy: "PACKED"}, refs{sc("placement_strategy", ns)}},
		{ScalingConfig{PlacementStrategy: "pack"}, refs{sc("placement_strategy", ns)}},
		{ScalingConfig{PlacementStrategy: placement.StrictSpread}, nil},
		{ScalingConfig{ResourcesPerWorker: map[string]float64{"TPU": 0, "CPU": 0}}, nil},
		{ScalingConfig{ResourcesPerWorker: map[string]float64{"TPU": -1, "CPU": -2, "b": 1, "a": nan, "z": math.Inf(-1)}},
			refs{sc("resources_per_worker[CPU]", inv), sc("resources_per_worker[TPU]", inv), sc("resources_per_worker[a]", inv), sc("resources_per_worker[z]", inv)}},
		{ScalingConfig{NumWorkers: -1, PlacementStrategy: "SPRED", ResourcesPerWorker: map[string]float64{"memory": -1}, MaxWorkers: -1},
			refs{sc("num_workers", inv), sc("resources_per_worker[memory]", inv), sc("placement_strategy", ns), sc("max_workers", inv)}},
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
	rn := func(name string, typ field.Type) field.Ref {
		return field.Ref{Field: "trainer.run_config." + name, Type: typ}
	}
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
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: -1}}, refs{rn("checkpoint_config.num_to_keep", inv)}},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: 3, ScoreOrder: "min"}}, nil},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "mx"}}, refs{rn("checkpoint_config.checkpoint_score_order", ns)}},
		{RunConfig{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "MAX"}}, refs{rn("checkpoint_config.checkpoint_score_order", ns)}},
		{RunConfig{Name: "ok", Failure: FailureConfig{RetryForever: true}}, nil},
		{RunConfig{Name: "ok", Failure: FailureConfig{MaxFailures: -1}}, refs{rn("failure_config.max_failures", inv)}},
		{RunConfig{Name: "ok", Failure: FailureConfig{MaxFailures: -2}}, refs{rn("failure_config.max_failures", inv)}},
		{RunConfig{Name: "ok", Failure: FailureConfig{MaxFailures: 2, RetryForever: true}}, refs{rn("failure_config.retry_forever", field.TypeForbidden)}},
		{RunConfig{Checkpoint: CheckpointConfig{NumToKeep: -1, ScoreOrder: "mx"}, Failure: FailureConfig{MaxFailures: -2}},
			refs{rn("name", req), rn("checkpoint_config.num_to_keep", inv), rn("checkpoint_config.checkpoint_score_order", ns), rn("failure_config.max_failures", inv)}},
		{RunConfig{Name: "x/", Checkpoint: CheckpointConfig{NumToKeep: math.MinInt}, Failure: FailureConfig{MaxFailures: math.MinInt}},
			refs{rn("name", inv), rn("checkpoint_config.num_to_keep", inv), rn("failure_config.max_failures", inv)}},
	}
	for _, c := range runs {
		if diff := cmp.Diff(c.want, field.Refs(c.r.validateFields(runPath).Err())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.r, diff)
		}
	}
}

// Every independent problem at once: a bad accelerator is reported with a
// missing topology, a pod type given as the topology is read as one.
func TestSliceFieldsReportedTogether(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    ScalingConfig
		want []field.Ref
	}{
		{ScalingConfig{UseTPU: true, NumWorkers: 4, Accelerator: "v6"}, []field.Ref{
			{Field: "trainer.scaling_config.topology", Type: field.TypeRequired},
			{Field: "trainer.scaling_config.accelerator_type", Type: field.TypeNotSupported}}},
		{ScalingConfig{UseTPU: true, NumWorkers: 4, Topology: "v5litepod-16"}, []field.Ref{
			{Field: "trainer.scaling_config.accelerator_type", Type: field.TypeRequired},
			{Field: "trainer.scaling_config.topology", Type: field.TypeNotSupported}}},
	} {
		_, _, errs := c.s.compile(scalingPath, scalingSlice, WorkerGroupStartTimeout)
		if diff := cmp.Diff(c.want, field.Refs(errs.Err())); diff != "" {
			t.Errorf("%+v (-want +got):\n%s\n%v", c.s, diff, errs)
		}
		for _, e := range errs {
			if e.Type == field.TypeNotSupported && e.Suggestion == "" {
				t.Errorf("%s: no suggestion: %v", e.Field, e)
			}
		}
	}
}
