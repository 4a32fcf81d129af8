package nilness_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/nilness"
)

type runner struct{}

func (*runner) Run() {}

type fn func()

func (fn) Run() {}

type iface interface{ Run() }

func TestIs(t *testing.T) {
	t.Parallel()
	var nilPtr *runner
	var nilFn fn
	var nilIface iface
	for _, c := range []struct {
		name string
		v    iface
		want bool
	}{
		{"untyped nil", nilIface, true},
		{"typed nil pointer", nilPtr, true},
		{"typed nil func", nilFn, true},
		{"pointer", &runner{}, false},
		{"func", fn(func() {}), false},
	} {
		if got := nilness.Is(c.v); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
	if nilness.Is(0) || nilness.Is("") || nilness.Is(struct{}{}) {
		t.Error("a zero value that is not a nil reference counts as nil")
	}
}
