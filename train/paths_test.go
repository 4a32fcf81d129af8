package train

import (
	"reflect"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Every path a trainer's errors carry is spelled by the json tags of the
// structs it walks (Ray's keywords), with map keys in brackets: the field
// path rule of the root package's doc, checked on a corpus of bad
// trainers. Below runtime_env and datasets the paths are those packages'.
func TestErrorPathsFollowJSONTags(t *testing.T) {
	t.Parallel()
	one := 1
	bad := []JaxTrainer{
		{TrainLoopPerWorker: "not a path", TrainLoopConfig: []int{1},
			ScalingConfig: ScalingConfig{NumWorkers: -1, NumSlices: -1, ChipsPerHost: -1, UseTPU: true, UseGPU: true, Accelerator: "v6", Topology: "4x5",
				ResourcesPerWorker: map[string]float64{"CPU": -1}, PlacementStrategy: "PACKED", LabelSelector: map[string]string{"a": "!!b"},
				MinWorkers: -1, MaxWorkers: -1, ElasticResizeMonitorInterval: -1},
			RunConfig: RunConfig{Name: "a/b", LogLevel: "LOUD", WorkerGroupStartTimeout: -1, Profiler: &ProfilerConfig{Port: -1},
				Checkpoint: CheckpointConfig{NumToKeep: -1, ScoreOrder: "mx"},
				Failure:    FailureConfig{MaxFailures: -2, ControllerFailureLimit: new(-5), MaxPreemptionFailures: new(-5), PreemptionGrace: -1}},
			JaxConfig: &JaxConfig{UseTPU: true, UseGPU: true}},
		{TrainLoopPerWorker: "m:f", ScalingConfig: ScalingConfig{UseTPU: true, NumWorkers: 3, Accelerator: "v6e", Topology: "4x4", ChipsPerHost: 3,
			ResourcesPerWorker: map[string]float64{"TPU": 0}}, RunConfig: RunConfig{Name: "r"}},
		{TrainLoopPerWorker: "m:f", ScalingConfig: ScalingConfig{UseTPU: true, MinWorkers: 3, MaxWorkers: 5, Accelerator: "v6e", Topology: "4x4"},
			RunConfig: RunConfig{Name: "r", Failure: FailureConfig{ControllerFailureLimit: &one}}},
		{TrainLoopPerWorker: "m:f", ScalingConfig: ScalingConfig{NumWorkers: 1 << 40, NumSlices: 1 << 40, Accelerator: "v6e"},
			RunConfig: RunConfig{Name: strings.Repeat("n", placement.MaxNameLength+1), Profiler: &ProfilerConfig{Port: 9000}}},
	}
	seen := 0
	for _, tr := range bad {
		_, err := tr.Compile()
		for _, e := range field.Errors(err) {
			seen++
			if msg := walkTags(reflect.TypeFor[JaxTrainer](), e.Field); msg != "" {
				t.Errorf("%s: %s", e.Field, msg)
			}
		}
	}
	if seen < 30 {
		t.Errorf("the corpus gave %d errors; want at least 30", seen)
	}
}

// walkTags follows path (trainer.a.b[k].c) through t by json tags and
// returns what does not match, or "".
func walkTags(t reflect.Type, path string) string {
	rest, ok := strings.CutPrefix(path, "trainer")
	if !ok {
		return "does not start at trainer"
	}
	for rest != "" {
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 || (t.Kind() != reflect.Map && t.Kind() != reflect.Slice) {
				return "a key or index where " + t.String() + " has none"
			}
			t, rest = t.Elem(), rest[end+1:]
			continue
		}
		rest = strings.TrimPrefix(rest, ".")
		name := rest
		if i := strings.IndexAny(rest, ".["); i >= 0 {
			name, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "a field " + name + " below " + t.String()
		}
		f, found := fieldByTag(t, name)
		if !found {
			return t.String() + " has no field with json tag " + name
		}
		if name == "runtime_env" || name == "datasets" {
			return "" // runtimeenv's and the dataset source's own paths
		}
		t = f.Type
	}
	return ""
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
