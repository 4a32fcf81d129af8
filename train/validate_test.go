package train

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// taggedScaling and taggedRun are ScalingConfig and RunConfig as they were
// declared with go-playground validate tags, the engine validateFields
// replaces; converting the real types to them proves the fields match.
type taggedScaling struct {
	NumWorkers                   int                `validate:"gte=0" detail:"cannot be negative"`
	NumSlices                    int                `validate:"gte=0" detail:"cannot be negative"`
	UseTPU                       bool               //
	UseGPU                       bool               //
	Accelerator                  string             //
	Topology                     string             //
	ChipsPerHost                 int                `validate:"gte=0" detail:"must be positive, or 0 for Ray's chips per host"`
	ResourcesPerWorker           map[string]float64 `validate:"dive,gte=0" detail:"cannot be negative"`
	PlacementStrategy            placement.Strategy `validate:"omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD"`
	LabelSelector                map[string]string  //
	MinWorkers                   int                `validate:"gte=0" detail:"cannot be negative"`
	MaxWorkers                   int                `validate:"gte=0" detail:"cannot be negative"`
	ElasticResizeMonitorInterval time.Duration      //
}

type taggedRun struct {
	Name                    string `validate:"notblank,excludesall=/\\" detail-notblank:"a run name; runs that share a name and storage path resume one another" detail-excludesall:"must not contain a path separator"`
	StoragePath             string
	Checkpoint              taggedCheckpoint
	Failure                 taggedFailure
	WorkerEnv               map[string]string
	LogLevel                string
	WorkerGroupStartTimeout time.Duration
	Profiler                *ProfilerConfig
}

type taggedCheckpoint struct {
	NumToKeep      int `validate:"gte=0" detail:"must be at least 1, or 0 to keep every checkpoint"`
	ScoreAttribute string
	ScoreOrder     string `validate:"omitempty,oneof=max min"`
}

type taggedFailure struct {
	MaxFailures                  int `validate:"gte=-1" detail:"must be -1 (retry forever), 0, or a positive count"`
	ControllerFailureLimit       *int
	MaxPreemptionFailures        *int
	RelaxCollectivesOnPreemption bool
	PreemptionGrace              time.Duration
}

func toTaggedRun(r RunConfig) taggedRun {
	return taggedRun{
		Name: r.Name, StoragePath: r.StoragePath,
		Checkpoint: taggedCheckpoint(r.Checkpoint), Failure: taggedFailure(r.Failure),
		WorkerEnv: r.WorkerEnv, LogLevel: r.LogLevel, WorkerGroupStartTimeout: r.WorkerGroupStartTimeout, Profiler: r.Profiler,
	}
}

// The hand-written field rules report what the tags reported: the same
// errors (path, type, bad value) in the same order.
func TestFieldRulesMatchTheTags(t *testing.T) {
	t.Parallel()
	root := field.NewPath("trainer", "scaling")
	nan := math.NaN()
	scalings := []ScalingConfig{
		{}, {NumWorkers: 8, UseTPU: true, Accelerator: "v6e", Topology: "4x4", PlacementStrategy: placement.Pack},
		{NumWorkers: -1}, {NumSlices: -1}, {ChipsPerHost: -4}, {MinWorkers: -1}, {MaxWorkers: -2},
		{NumWorkers: math.MinInt, NumSlices: -3, ChipsPerHost: -1, MinWorkers: -5, MaxWorkers: -6},
		{PlacementStrategy: "PACKED"}, {PlacementStrategy: "pack"}, {PlacementStrategy: placement.StrictSpread},
		{ResourcesPerWorker: map[string]float64{"TPU": 0, "CPU": 0}},
		{ResourcesPerWorker: map[string]float64{"TPU": -1, "CPU": -2, "b": 1, "a": nan, "z": math.Inf(-1)}},
		{NumWorkers: -1, PlacementStrategy: "SPRED", ResourcesPerWorker: map[string]float64{"memory": -1}, MaxWorkers: -1},
	}
	for _, s := range scalings {
		tagged := taggedScaling(s)
		want := field.ValidateStruct(root, &tagged)
		got := s.validateFields(root)
		if diff := cmp.Diff(errorKeys(want), errorKeys(got)); diff != "" {
			t.Errorf("%+v (-tags +code):\n%s", s, diff)
		}
		if s.fieldsHold() != (len(got) == 0) {
			t.Errorf("%+v: fieldsHold = %v with %v", s, s.fieldsHold(), got)
		}
	}
	runRoot := field.NewPath("trainer", "run")
	runs := []RunConfig{
		{}, {Name: "ok"}, {Name: "  \t"}, {Name: "a/b"}, {Name: `a\b`}, {Name: "/"},
		{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: -1}},
		{Name: "ok", Checkpoint: CheckpointConfig{NumToKeep: 3, ScoreOrder: "min"}},
		{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "mx"}},
		{Name: "ok", Checkpoint: CheckpointConfig{ScoreOrder: "MAX"}},
		{Name: "ok", Failure: FailureConfig{MaxFailures: -1}},
		{Name: "ok", Failure: FailureConfig{MaxFailures: -2}},
		{Checkpoint: CheckpointConfig{NumToKeep: -1, ScoreOrder: "mx"}, Failure: FailureConfig{MaxFailures: -2}},
		{Name: "x/", Checkpoint: CheckpointConfig{NumToKeep: math.MinInt}, Failure: FailureConfig{MaxFailures: math.MinInt}},
	}
	for _, r := range runs {
		tagged := toTaggedRun(r)
		want := field.ValidateStruct(runRoot, &tagged)
		got := r.validateFields(runRoot)
		if diff := cmp.Diff(errorKeys(want), errorKeys(got)); diff != "" {
			t.Errorf("%+v (-tags +code):\n%s", r, diff)
		}
	}
}

type errorKey struct {
	Ref      field.Ref
	BadValue string
}

func errorKeys(errs field.ErrorList) []errorKey {
	var out []errorKey
	for _, e := range errs {
		var v string
		if e.Type != field.TypeRequired {
			v = field.Invalid(nil, e.BadValue, "").Error()
		}
		out = append(out, errorKey{field.Ref{Field: e.Field, Type: e.Type}, v})
	}
	return out
}
