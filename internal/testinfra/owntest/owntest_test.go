package owntest_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/owntest"
)

type bundle struct {
	Resources map[string]float64
	Labels    []string
}

type plan struct {
	Name    string
	Bundles []bundle
	Extra   any
	Ptr     *bundle
	hidden  map[string]int
}

// shared is what a compile that keeps state between calls hands out.
var shared = struct {
	resources map[string]float64
	labels    []string
	nested    map[string]any
	ptr       *bundle
}{
	resources: map[string]float64{"TPU": 4},
	labels:    []string{"a"},
	nested:    map[string]any{"inner": map[string]any{"k": "v"}},
	ptr:       &bundle{Resources: map[string]float64{"CPU": 1}},
}

func fresh() plan {
	return plan{
		Name:    "p",
		Bundles: []bundle{{Resources: map[string]float64{"TPU": 4}, Labels: []string{"a"}}},
		Extra:   map[string]any{"inner": map[string]any{"k": "v"}},
		Ptr:     &bundle{Resources: map[string]float64{"CPU": 1}},
		hidden:  map[string]int{"x": 1},
	}
}

// recorder is a testing.TB that records failures; Fatalf ends the
// goroutine as testing's does.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, format)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msgs = append(r.msgs, format)
	runtime.Goexit()
}

func check(compile func() (plan, error)) []string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		owntest.CheckCompiles(r, compile)
	}()
	<-done
	return r.msgs
}

func TestCheckCompiles(t *testing.T) {
	t.Parallel()
	if msgs := check(func() (plan, error) { return fresh(), nil }); len(msgs) > 0 {
		t.Errorf("a compile that shares nothing failed: %v", msgs)
	}
	for name, share := range map[string]func(*plan){
		"map in a slice element": func(p *plan) { p.Bundles[0].Resources = shared.resources },
		"slice":                  func(p *plan) { p.Bundles[0].Labels = shared.labels },
		"map inside an any":      func(p *plan) { p.Extra = shared.nested },
		"pointer":                func(p *plan) { p.Ptr = shared.ptr },
	} {
		msgs := check(func() (plan, error) {
			p := fresh()
			share(&p)
			return p, nil
		})
		if len(msgs) == 0 {
			t.Errorf("%s: a compile that shares state passed", name)
		}
	}
	// Nothing to change: the check says it would be vacuous.
	msgs := check(func() (plan, error) { return plan{Name: "p"}, nil })
	if len(msgs) != 1 || !strings.Contains(msgs[0], "vacuous") {
		t.Errorf("a result without maps or slices: %v, want the vacuous-check failure", msgs)
	}
}

func TestMutate(t *testing.T) {
	t.Parallel()
	p := fresh()
	inner := p.Extra.(map[string]any)["inner"].(map[string]any)
	// Bundles, its Resources and Labels, Extra and inner, Ptr's Resources.
	if n := owntest.Mutate(&p); n != 6 {
		t.Errorf("Mutate changed %d maps and slices, want 6", n)
	}
	if p.Name != "p~" || p.Bundles[0].Resources["TPU"] != 5 || p.Bundles[0].Labels[0] != "a~" || p.Ptr.Resources["CPU"] != 2 {
		t.Errorf("values not changed: %+v", p)
	}
	for _, m := range []map[string]float64{p.Bundles[0].Resources, p.Ptr.Resources} {
		if _, ok := m[owntest.MutatedKey]; !ok {
			t.Errorf("no %s in %v", owntest.MutatedKey, m)
		}
	}
	if inner["k"] != "v~" {
		t.Errorf("a map inside an any not changed: %v", inner)
	}
	if p.hidden["x"] != 1 || len(p.hidden) != 1 {
		t.Errorf("an unexported field was changed: %v", p.hidden)
	}
}
