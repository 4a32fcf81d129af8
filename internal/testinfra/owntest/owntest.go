// Package owntest checks that a value a compile returns belongs to its
// caller: changing anything in it reaches no other value, neither one
// compiled before nor one compiled after. It walks values with reflect,
// so a field added to a plan later is covered without a change here.
package owntest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// MutatedKey is the key Mutate adds to every map with string keys.
const MutatedKey = "raytpu.dev/mutated"

// Mutate changes every value reachable from v that its holder could
// change: through exported struct fields, pointers, interfaces, slice and
// array elements and map entries, it changes every string, number and bool
// it can set, every map entry, and adds MutatedKey to every map with
// string keys. Unexported fields are left alone (their holder cannot reach
// them either). It returns the number of non-empty maps and slices it
// changed.
func Mutate(v any) int {
	m := mutator{seen: map[visit]bool{}}
	m.value(reflect.ValueOf(v))
	return m.n
}

// visit is a pointer or a map already walked, with its type.
type visit struct {
	typ reflect.Type
	ptr uintptr
}

type mutator struct {
	seen map[visit]bool
	n    int
}

// once reports whether the pointer or map v is walked for the first time.
func (m *mutator) once(v reflect.Value) bool {
	k := visit{v.Type(), v.Pointer()}
	if m.seen[k] {
		return false
	}
	m.seen[k] = true
	return true
}

func (m *mutator) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() && m.once(v) {
			m.value(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// The dynamic value is a copy: change a copy of it and put that
		// back (a map, slice or pointer in it is changed in place).
		e := v.Elem()
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		m.value(c)
		if v.CanSet() {
			v.Set(c)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				m.value(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() > 0 {
			m.n++
		}
		for i := range v.Len() {
			m.value(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			m.value(v.Index(i))
		}
	case reflect.Map:
		m.mapValue(v)
	default:
		scalar(v)
	}
}

func (m *mutator) mapValue(v reflect.Value) {
	if v.IsNil() || !m.once(v) {
		return
	}
	if v.Len() > 0 {
		m.n++
	}
	for _, k := range v.MapKeys() {
		c := reflect.New(v.Type().Elem()).Elem()
		c.Set(v.MapIndex(k))
		m.value(c)
		v.SetMapIndex(k, c)
	}
	if v.Type().Key().Kind() == reflect.String {
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString(MutatedKey)
		e := reflect.New(v.Type().Elem()).Elem()
		scalar(e)
		v.SetMapIndex(k, e)
	}
}

// scalar changes a string, number or bool v if it can be set.
func scalar(v reflect.Value) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}

// CheckCompiles proves that what compile returns belongs to its caller.
// It compiles three times: the first result is encoded as JSON at once,
// the second is changed everywhere (Mutate), and the third, and the first
// again, must still be what the first was: equal to it, and encoding to
// the same bytes. compile must succeed and return a value reaching at
// least one map or slice.
func CheckCompiles[T any](t testing.TB, compile func() (T, error)) {
	t.Helper()
	first, err := compile()
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	want := encode(t, first)
	second, err := compile()
	if err != nil {
		t.Fatalf("second compile: %v", err)
	}
	if n := Mutate(second); n == 0 {
		t.Fatalf("the compiled %T reaches no map or slice to change; the check would be vacuous", second)
	}
	third, err := compile()
	if err != nil {
		t.Fatalf("compile after changing an earlier result: %v", err)
	}
	if reflect.DeepEqual(second, third) {
		t.Fatalf("the changed %T equals a fresh compile; Mutate changed nothing", second)
	}
	for _, c := range []struct {
		name string
		got  T
	}{{"a compile after the change", third}, {"the result compiled before", first}} {
		if got := encode(t, c.got); string(got) != string(want) {
			t.Errorf("changing a compiled %T changed %s:\n%s\nwant\n%s", second, c.name, got, want)
		}
	}
	if !reflect.DeepEqual(first, third) {
		t.Errorf("changing a compiled %T changed a compile before or after it (in a field the encoding leaves out)", second)
	}
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	return b
}
