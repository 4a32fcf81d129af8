package serveconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/raytpu/raytpu/runtimeenv"
)

// fill sets every field of the struct v points to, recursively, to a
// value that is not its zero value, so the encoding shows every field: a
// field added to a config type without its line in encode.go makes the
// two encoders differ.
func fill(t *testing.T, v reflect.Value, s string, f float64) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), s, f)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[Replicas]():
			v.Set(reflect.ValueOf(ReplicaCount(3)))
			return
		case reflect.TypeFor[QueueLimit]():
			v.Set(reflect.ValueOf(MaxQueued(3)))
			return
		}
		if v.Type() == reflect.TypeOf(runtimeenv.RuntimeEnv{}) {
			v.Set(reflect.ValueOf(runtimeenv.RuntimeEnv{WorkingDir: "gcs://_ray_pkg_x.zip", EnvVars: map[string]string{"A": s}}))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), s, f)
			}
		}
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(3)
	case reflect.Float64:
		v.SetFloat(f)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"b", s, "a"} {
			e := reflect.New(v.Type().Elem()).Elem()
			if e.Kind() == reflect.Interface {
				e.Set(reflect.ValueOf(map[string]any{"s": s, "f": f, "l": []any{1.5, "x", nil, true}, "r": &SliceReservation{Topology: s, ResourcesPerBundle: map[string]float64{"TPU": f}}}))
			} else {
				fill(t, e, s, f)
			}
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			v.Set(reflect.ValueOf(json.RawMessage(`"/p"`)))
			return
		}
		sl := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, sl.Index(i), s, f)
		}
		v.Set(sl)
	default:
		t.Fatalf("fill: no value for kind %s (%s): teach the test and encode.go the new field", v.Kind(), v.Type())
	}
}

// plainApp and plainDeployment are the config types without their
// MarshalJSON: what encoding/json writes for their fields.
type (
	plainApp        applicationJSON
	plainDeployment deploymentJSON
)

// deploymentReference is what encoding/json writes for d, its
// reservation and profiler merged into its user_config as the encoder
// merges them.
func deploymentReference(d Deployment) ([]byte, error) {
	if d.Reservation != nil {
		merged := map[string]any{SliceReservationKey: d.Reservation}
		if d.Profiler != nil {
			merged[ProfilerKey] = map[string]any{"port": d.Profiler.Port}
		}
		for k, v := range d.UserConfig {
			if _, reserved := merged[k]; !reserved {
				merged[k] = v
			}
		}
		d.UserConfig = merged
	}
	return marshalReflect(plainDeployment(d))
}

// reference is what encoding/json writes for a, with each deployment as
// deploymentReference writes it: the hand-written encoder of every
// deployment is checked against it first, and encoding/json then writes
// the application around them.
func reference(a *Application) ([]byte, error) {
	for _, d := range a.Deployments {
		want, werr := deploymentReference(d)
		got, gerr := d.MarshalJSON()
		if string(got) != string(want) || (werr == nil) != (gerr == nil) {
			return nil, fmt.Errorf("deployment %q:\n got %s (%v)\nwant %s (%v)", d.Name, got, gerr, want, werr)
		}
	}
	return marshalReflect(plainApp(*a))
}

func TestConfigJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	values := []struct {
		s string
		f float64
	}{
		{"plain", 1.5},
		{`quote " back \ <html> & tab	`, 1e-7},
		{"uni ü \u2028 \x01 \xff", 1e21},
		{"", -2.25e-9},
		{"big", 123456789012},
	}
	for _, c := range values {
		var a Application
		fill(t, reflect.ValueOf(&a).Elem(), c.s, c.f)
		for i := range a.Deployments {
			a.Deployments[i].Reservation, a.Deployments[i].Profiler = nil, nil
		}
		for _, n := range []Replicas{ReplicaCount(3), AutoReplicas()} {
			for i := range a.Deployments {
				a.Deployments[i].NumReplicas = n
				a.Deployments[i].MaxQueuedRequests = NoQueueLimit()
			}
			want, werr := reference(&a)
			got, gerr := a.MarshalJSON()
			if string(got) != string(want) || (werr == nil) != (gerr == nil) {
				t.Errorf("s=%q f=%g n=%v:\n got %s (%v)\nwant %s (%v)", c.s, c.f, n, got, gerr, want, werr)
			}
		}
	}
	// The zero config, and values encoding/json refuses.
	if got, _ := (Application{}).MarshalJSON(); string(got) != `{"name":"","import_path":""}` {
		t.Errorf("zero config: %s", got)
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), make(chan int)} {
		_, werr := marshalReflect(map[string]any{"k": bad})
		_, gerr := marshal(map[string]any{"k": bad})
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Errorf("%v: errors %v and %v, want encoding/json's", bad, gerr, werr)
		}
	}
}

func FuzzConfigJSON(f *testing.F) {
	f.Add("name", "/route", 1.5, 2)
	f.Add("\u00e9\"\\", "<>&", 1e-300, -1)
	f.Fuzz(func(t *testing.T, s, k string, x float64, n int) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		a := Application{Name: s, ImportPath: k, Args: map[string]any{k: s, s: x},
			Deployments: []Deployment{{Name: k, NumReplicas: ReplicaCount(n), UserConfig: map[string]any{s: []any{x, k}},
				PlacementGroupBundles: []map[string]float64{{k: x}}, PlacementGroupBundleLabelSelector: []map[string]string{{s: k}}}}}
		want, werr := reference(&a)
		got, gerr := a.MarshalJSON()
		if string(got) != string(want) || (werr == nil) != (gerr == nil) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// TestUserConfigWithReservation checks that a deployment's reservation
// and profiler are written into user_config exactly as encoding/json
// writes a user_config map that holds them, with and without user keys
// around them.
func TestUserConfigWithReservation(t *testing.T) {
	t.Parallel()
	res := &SliceReservation{Version: 1, Topology: "2x2x2", ResourcesPerBundle: map[string]float64{"TPU": 4, "CPU": 1}, Strategy: "PACK", HeadReservationTimeoutS: 100}
	for _, prof := range []*ProfilerConfig{nil, {}, {Port: 9012}} {
		for _, uc := range []map[string]any{
			nil,
			{},
			{"a": 1.5},
			{"zz": "last", "raytpu": true, "raytpu_slicf": nil, "raytpu_slic": []any{"x"}, "raytpu_profilez": 1.0},
			{"b": map[string]any{"c": 2.0}, "A": "upper", "é": "non-ascii"},
			{SliceReservationKey: "the user's, replaced", ProfilerKey: "also replaced"},
		} {
			a := Application{Name: "a", Deployments: []Deployment{{Name: "LLM", UserConfig: uc, Reservation: res, Profiler: prof}}}
			want, err := reference(&a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("user_config %v, profiler %v:\n got %s\nwant %s", uc, prof, got, want)
			}
		}
	}
}

// TestNumIsEncodingJSONs covers the whole-number shortcut of jsonEnc.num
// and its edges against encoding/json.
func TestNumIsEncodingJSONs(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 4, 100, 120, 0.5, 0.001, 1e-7, 123456789012,
		1e15 - 1, 1e15, -1e15, 1e15 + 2, 1e20, 1e21, 1e300, math.MaxInt64, math.MinInt64, 4.000000000000001, -2.5} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var e jsonEnc
		e.num(f)
		if string(e.b) != string(want) {
			t.Errorf("num(%v) = %s, want %s", f, e.b, want)
		}
	}
}

// TestRawIsEncodingJSONs covers raw's shortcut for plain strings and null
// against encoding/json, errors included.
func TestRawIsEncodingJSONs(t *testing.T) {
	t.Parallel()
	for _, m := range []string{`null`, `"/chat"`, `"/"`, `""`, `"a b~"`, `"\u00e9"`, `"é"`, `"a\"b"`, `"a\\"`, "\"\x01\"", `"\x"`,
		` "/chat" `, `"`, `"/chat`, `nul`, `{"a": [1, 2]}`, `"<&>"`} {
		want, werr := marshalReflect(json.RawMessage(m))
		var e jsonEnc
		e.raw(json.RawMessage(m))
		if string(e.b) != string(want) || (werr == nil) != (e.err == nil) || (werr != nil && werr.Error() != e.err.Error()) {
			t.Errorf("raw(%q) = %q (%v), want %q (%v)", m, e.b, e.err, want, werr)
		}
	}
}
