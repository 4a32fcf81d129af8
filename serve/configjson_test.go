package serve

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/raytpu/raytpu/runtimeenv"
)

// fill sets every field of the struct v points to, recursively, to a
// value that is not its zero value, so the encoding shows every field: a
// field added to a config type without its line in configjson.go makes
// the two encoders differ.
func fill(t *testing.T, v reflect.Value, s string, f float64) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), s, f)
	case reflect.Struct:
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
		t.Fatalf("fill: no value for kind %s (%s): teach the test and configjson.go the new field", v.Kind(), v.Type())
	}
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
		var a rayApplication
		fill(t, reflect.ValueOf(&a).Elem(), c.s, c.f)
		for _, n := range []NumReplicas{3, Auto} {
			for i := range a.Deployments {
				a.Deployments[i].NumReplicas = n
			}
			want, werr := marshalReflect(a)
			got, gerr := encodeConfig(&a)
			if string(got) != string(want) || (werr == nil) != (gerr == nil) {
				t.Errorf("s=%q f=%g n=%d:\n got %s (%v)\nwant %s (%v)", c.s, c.f, n, got, gerr, want, werr)
			}
		}
	}
	// The zero config, and values encoding/json refuses.
	if got, _ := encodeConfig(&rayApplication{}); string(got) != `{"name":"","import_path":""}` {
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
		a := rayApplication{Name: s, ImportPath: k, Args: map[string]any{k: s, s: x},
			Deployments: []rayDeployment{{Name: k, NumReplicas: NumReplicas(n), UserConfig: map[string]any{s: []any{x, k}},
				PlacementGroupBundles: []map[string]float64{{k: x}}, PlacementGroupBundleLabelSelector: []map[string]string{{s: k}}}}}
		want, werr := marshalReflect(a)
		got, gerr := encodeConfig(&a)
		if string(got) != string(want) || (werr == nil) != (gerr == nil) {
			t.Fatalf("got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// TestUserConfigWithReservation checks that a deployment's reservation is
// written into user_config exactly as encoding/json writes a user_config
// map that holds it, with and without user keys around it.
func TestUserConfigWithReservation(t *testing.T) {
	t.Parallel()
	res := &SliceReservation{Version: 1, Topology: "2x2x2", ResourcesPerBundle: map[string]float64{"TPU": 4, "CPU": 1}, Strategy: "PACK", HeadReservationTimeoutS: 100}
	for _, uc := range []map[string]any{
		nil,
		{},
		{"a": 1.5},
		{"zz": "last", "raytpu": true, "raytpu_slicf": nil, "raytpu_slic": []any{"x"}},
		{"b": map[string]any{"c": 2.0}, "A": "upper", "é": "non-ascii"},
		{SliceReservationKey: "the user's, replaced"},
	} {
		d := rayDeployment{Name: "LLM", UserConfig: uc, reservation: *res, hasReservation: true}
		merged := map[string]any{SliceReservationKey: res}
		for k, v := range uc {
			if k != SliceReservationKey {
				merged[k] = v
			}
		}
		want, err := marshalReflect(rayApplication{Name: "a", Deployments: []rayDeployment{{Name: "LLM", UserConfig: merged}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeConfig(&rayApplication{Name: "a", Deployments: []rayDeployment{d}})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("user_config %v:\n got %s\nwant %s", uc, got, want)
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
