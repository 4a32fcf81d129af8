package rayruntime_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/serveconfig"
)

type protocolKey struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	Shape    string `json:"shape"`
}

// protocolDoc is the part of the description the tests read as types;
// the constants are read by key.
type protocolDoc struct {
	Ray struct {
		PrivateAPIs []rayruntime.PrivateAPI `json:"private_apis"`
	} `json:"ray"`
	Types []struct {
		Name string        `json:"name"`
		Read string        `json:"read"`
		Keys []protocolKey `json:"keys"`
	} `json:"types"`
}

func readProtocol(t *testing.T) protocolDoc {
	t.Helper()
	var p protocolDoc
	if err := json.Unmarshal(rayruntime.Protocol(), &p); err != nil {
		t.Fatalf("decoding Protocol(): %v", err)
	}
	return p
}

// The description carries this package's constants, the same bytes on
// every call.
func TestProtocolConstants(t *testing.T) {
	t.Parallel()
	if !bytes.Equal(rayruntime.Protocol(), rayruntime.Protocol()) {
		t.Fatal("Protocol() differs between calls")
	}
	var m map[string]any
	if err := json.Unmarshal(rayruntime.Protocol(), &m); err != nil {
		t.Fatal(err)
	}
	files, _ := m["files"].(map[string]any)
	ray, _ := m["ray"].(map[string]any)
	got := []any{m["version"], m["result_prefix"], m["profiler_prefix"], m["iter_jax_batches_key"], m["callable_kwarg"], m["reservation_key"], m["reservation_version"], m["profiler_key"], m["slice_group_prefix"], ray["checked_version"], m["entries"],
		files["launcher"], files["recorder"], files["runtime"], files["protocol"], files["plan"], files["replica_module"]}
	want := []any{float64(rayruntime.ProtocolVersion), rayruntime.ResultPrefix, rayruntime.ProfilerPrefix, rayruntime.IterJaxBatchesKey, rayruntime.CallableKwarg, rayruntime.ReservationKey, float64(rayruntime.ReservationVersion), rayruntime.ProfilerKey, rayruntime.SliceGroupPrefix, rayruntime.CheckedRayVersion, []any{rayruntime.EntryData, rayruntime.EntryTrain},
		rayruntime.LauncherFile, rayruntime.RecorderFile, rayruntime.RuntimeFile, rayruntime.ProtocolFile, rayruntime.PlanFile, rayruntime.ModuleName}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("protocol constants (-want +got):\n%s", d)
	}
	p := readProtocol(t)
	if d := cmp.Diff(rayruntime.PrivateRayAPIs(), p.Ray.PrivateAPIs); d != "" || len(p.Ray.PrivateAPIs) == 0 {
		t.Errorf("private Ray APIs (-want +got):\n%s", d)
	}
	apis := rayruntime.PrivateRayAPIs()
	apis[0].Module = "changed"
	if rayruntime.PrivateRayAPIs()[0].Module == "changed" {
		t.Error("PrivateRayAPIs shares its slice between calls")
	}
}

// wireTypes are the Go types whose JSON the Python reads, by the name the
// description gives them.
var wireTypes = map[string]any{
	"Plan": placement.Plan{}, "Job": placement.Job{},
	"TrainConfig": rayruntime.TrainConfig{}, "TrainScaling": rayruntime.TrainScaling{}, "TrainRun": rayruntime.TrainRun{},
	"TrainJax": rayruntime.TrainJax{}, "TrainProfiler": rayruntime.TrainProfiler{}, "TrainDatasets": rayruntime.TrainDatasets{},
	"DataConfig": rayruntime.DataConfig{}, "IterJaxBatchesKwargs": rayruntime.IterJaxBatchesKwargs{},
	"PipelineConfig": rayruntime.PipelineConfig{}, "Dataset": rayruntime.Dataset{}, "Op": rayruntime.Op{},
	"SliceReservation": serveconfig.SliceReservation{}, "ReplicaProfiler": serveconfig.ProfilerConfig{},
	"Outcome": rayruntime.Outcome{}, "OutcomeError": rayruntime.OutcomeError{},
}

// Every key of every wire type, as encoding/json writes a value with
// every field set, is in the description, and nothing else; a key is
// optional there exactly when the zero value leaves it out.
func TestProtocolHasEveryKey(t *testing.T) {
	t.Parallel()
	p := readProtocol(t)
	names := map[string]bool{}
	for _, typ := range p.Types {
		names[typ.Name] = true
	}
	for name := range wireTypes {
		if !names[name] {
			t.Errorf("the description lacks wire type %s", name)
		}
	}
	for _, typ := range p.Types {
		v, ok := wireTypes[typ.Name]
		if !ok {
			t.Errorf("the description has type %s, which this test does not know", typ.Name)
			continue
		}
		if !slices.Contains([]string{rayruntime.ReadAll, rayruntime.ReadPassThrough, rayruntime.ReadSome}, typ.Read) {
			t.Errorf("%s: read %q", typ.Name, typ.Read)
		}
		full := keysOf(t, filled(reflect.TypeOf(v)))
		zero := keysOf(t, reflect.New(reflect.TypeOf(v)).Elem())
		var described, optional, wantOptional []string
		for _, k := range typ.Keys {
			described = append(described, k.Name)
			if k.Optional {
				optional = append(optional, k.Name)
			}
			if !slices.Contains([]string{"object", "array", "string", "number", "bool", "any"}, k.Kind) {
				t.Errorf("%s.%s: kind %q", typ.Name, k.Name, k.Kind)
			}
			if k.Type != "" && !names[k.Type] {
				t.Errorf("%s.%s: type %q is not in the description", typ.Name, k.Name, k.Type)
			}
		}
		for _, k := range full {
			if !slices.Contains(zero, k) {
				wantOptional = append(wantOptional, k)
			}
		}
		slices.Sort(described)
		slices.Sort(optional)
		if d := cmp.Diff(full, described); d != "" {
			t.Errorf("%s: keys (-json +description):\n%s", typ.Name, d)
		}
		if d := cmp.Diff(wantOptional, optional); d != "" {
			t.Errorf("%s: optional keys (-json +description):\n%s", typ.Name, d)
		}
	}
}

// keysOf returns the sorted top-level JSON keys of v.
func keysOf(t *testing.T, v reflect.Value) []string {
	t.Helper()
	b, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatalf("%s: %v", v.Type(), err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", v.Type(), err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// filled returns a value of type t with every field set to a non-zero
// value, recursively.
func filled(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch {
	case t == rawMessage:
		v.SetBytes([]byte(`{"k":1}`))
		return v
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(filled(t.Field(i).Type))
			}
		}
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		p.Elem().Set(filled(t.Elem()))
		return p
	case t.Kind() == reflect.Slice:
		v = reflect.MakeSlice(t, 1, 1)
		v.Index(0).Set(filled(t.Elem()))
	case t.Kind() == reflect.Map:
		v = reflect.MakeMap(t)
		v.SetMapIndex(filled(t.Key()), filled(t.Elem()))
	case t.Kind() == reflect.String:
		v.SetString("x")
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		v.SetInt(1)
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		v.SetUint(1)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		v.SetFloat(1)
	case t.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
	return v
}
