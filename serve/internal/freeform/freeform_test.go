package freeform

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serveconfig"
)

var root = field.NewPath("app", "args")

// TestCheckIsMarshalsVerdict: Check refuses exactly the values Marshal
// refuses, for the values a user's args or user_config hold.
func TestCheckIsMarshalsVerdict(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(-1)
	type custom struct {
		F float64
		C chan int `json:",omitempty"`
	}
	values := []any{
		nil, "s", "\x01\xff<é>", true, 3, 1.5, int64(7), uint8(2), float32(2.5), []string{"a"},
		nan, inf, float32(math.NaN()), make(chan int), func() {}, complex(1, 2),
		map[string]any{}, map[string]any(nil), []any(nil), []any{},
		map[string]any{"a": 1.0, "b": []any{"x", nil, true, map[string]any{"c": 2}}},
		map[string]any{"b": nan, "a": make(chan int)},
		map[string]any{"z": []any{1.0, inf}, "y": map[string]any{"k": func() {}}},
		[]any{"ok", custom{F: 1}, custom{F: nan}},
		map[string]any{"r": &serveconfig.SliceReservation{HeadReservationTimeoutS: nan}},
		map[string]any{"r": (*serveconfig.SliceReservation)(nil), "m": map[string]int{"a": 1}},
	}
	failing := 0
	for _, v := range values {
		_, merr := Marshal(v)
		errs := Check(root, v)
		if (merr == nil) != (len(errs) == 0) {
			t.Errorf("%#v: Check = %v, Marshal = %v", v, errs, merr)
		}
		if merr != nil {
			failing++
			if strings.Contains(errs.Error(), "map[string]interface") {
				t.Errorf("%#v: the message prints a Go map: %v", v, errs)
			}
		}
	}
	if failing < 8 {
		t.Fatalf("only %d values fail to marshal; the table lost its bad values", failing)
	}
}

// TestCheckRefusesCyclesAtTheirPath: a map or list that holds itself is
// refused at the key that leads back to it, without a stack overflow.
func TestCheckRefusesCyclesAtTheirPath(t *testing.T) {
	t.Parallel()
	self := map[string]any{}
	self["self"] = self
	deep := map[string]any{"a": map[string]any{}}
	deep["a"].(map[string]any)["back"] = deep
	list := []any{1, nil}
	list[1] = list
	inList := map[string]any{"l": []any{"x", nil}}
	inList["l"].([]any)[1] = inList
	shared := map[string]any{"k": 1}
	dag := map[string]any{"a": shared, "b": shared, "c": []any{shared, shared}}
	for _, c := range []struct {
		name string
		v    any
		want string // path of the error; "" for none
	}{
		{"self", self, "app.args[self]"},
		{"deep", deep, "app.args[a][back]"},
		{"list", list, "app.args[1]"},
		{"list in map", inList, "app.args[l][1]"},
		{"shared, no cycle", dag, ""},
	} {
		errs := Check(root, c.v)
		var got string
		if len(errs) > 0 {
			got = errs[0].Field
			if errs[0].Type != field.TypeInvalid || len(errs) != 1 {
				t.Errorf("%s: %v, want one Invalid", c.name, errs)
			}
		}
		if got != c.want {
			t.Errorf("%s: error at %q (%v), want %q", c.name, got, errs, c.want)
		}
		if _, err := Copy(c.v); (err != nil) != (c.want != "") {
			t.Errorf("%s: Copy error %v", c.name, err)
		}
	}
	// serveconfig's own encoder refuses the cycle too.
	if _, err := (serveconfig.Application{Args: self}).MarshalJSON(); err == nil {
		t.Error("MarshalJSON of args holding themselves: no error")
	}
}

// TestCheckBounds: depth and the number of values are bounded.
func TestCheckBounds(t *testing.T) {
	t.Parallel()
	var v any = "leaf"
	for range MaxDepth + 1 {
		v = []any{v}
	}
	errs := Check(root, v)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Field, "app.args[0][0]") {
		t.Errorf("deep value: %v", errs)
	}
	// Nine references to one list, seven levels deep: 9^7 values.
	var wide any = "x"
	for range 7 {
		l := make([]any, 9)
		for i := range l {
			l[i] = wide
		}
		wide = l
	}
	errs = Check(root, wide)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "more than") {
		t.Errorf("wide value: %v", errs)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want any
	}{
		{map[string]any{"a": 1}, "{...}"},
		{[]any{1}, "[...]"},
		{1.5, 1.5},
		{"s", "s"},
		{map[string]int{}, "{...} (map[string]int)"},
		{make(chan int), "chan int"},
	} {
		if got := Describe(c.v); got != c.want {
			t.Errorf("Describe(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

// Copy copies maps and slices and turns other values into JSON's own
// types, so that changing the original changes nothing in the copy and the
// copy survives a round trip byte for byte.
func TestCopy(t *testing.T) {
	t.Parallel()
	type opts struct {
		Z int    `json:"z"`
		A string `json:"a"`
	}
	inner := []any{1.5}
	m := map[string]any{"list": inner, "opts": opts{Z: 1, A: "x"}, "ints": map[string]int{"b": 2}}
	c, err := CopyMap(m)
	if err != nil {
		t.Fatal(err)
	}
	inner[0] = "changed"
	m["new"] = true
	want := map[string]any{"list": []any{1.5}, "opts": map[string]any{"z": json.Number("1"), "a": "x"}, "ints": map[string]any{"b": json.Number("2")}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if _, err := Copy(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("a channel: no error")
	}
}
