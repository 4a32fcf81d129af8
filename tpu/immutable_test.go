package tpu_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/owntest"
	"github.com/raytpu/raytpu/tpu"
)

// validationSnapshot is what validation says about a set of slices of
// every generation under both rule sets, with host-size overrides, and
// what the catalog looks like through its exported fields.
func validationSnapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	cat, err := json.Marshal(tpu.Generations())
	if err != nil {
		t.Fatal(err)
	}
	b.Write(cat)
	for _, name := range tpu.GenerationNames() {
		g, ok := tpu.LookupGeneration(name)
		if !ok {
			t.Fatalf("LookupGeneration(%q) found nothing", name)
		}
		topos := append(g.ValidTopologies(tpu.TargetAny), "3x3", "4x5x6", "16")
		for _, topo := range topos[:min(len(topos), 12)] {
			for _, target := range []tpu.Target{tpu.TargetRay, tpu.TargetGKE} {
				for _, chipsPerHost := range []int{0, 1, 4, 8} {
					sl, errs := tpu.SliceSpec{Generation: name, Topology: topo, ChipsPerHost: chipsPerHost}.Resolve(target, tpu.FieldsUnder(nil))
					fmt.Fprintf(&b, "%s %s %v %d: %v", name, topo, target, chipsPerHost, errs)
					if sl != nil {
						fmt.Fprintf(&b, " %s %d hosts %s %s %s", sl.PodType(), sl.Hosts(), sl.MachineType, sl.GKEAccelerator(), sl.RayAcceleratorType())
					}
					b.WriteByte('\n')
				}
			}
		}
		fmt.Fprintf(&b, "%s pod types: %s %s\n", name, g.PodType(16), g.GCEAcceleratorType(16))
	}
	_, err = tpu.ResolveGeneration("v6", field.NewPath("generation"))
	fmt.Fprintf(&b, "%v\n", err)
	return b.String()
}

// TestCatalogIsReadOnly: every generation the package hands out
// (Generations, LookupGeneration, ResolveGeneration, ParsePodType, a
// resolved Slice's Generation) is the caller's copy: changing everything
// in it (names, counts, aliases, host sizes, machine types) changes
// neither a later lookup nor what validation accepts.
func TestCatalogIsReadOnly(t *testing.T) {
	t.Parallel()
	want := validationSnapshot(t)
	changed := 0
	for _, g := range tpu.Generations() {
		changed += owntest.Mutate(g)
	}
	for _, name := range tpu.GenerationNames() {
		g, _ := tpu.LookupGeneration(name)
		changed += owntest.Mutate(g)
		g, err := tpu.ResolveGeneration(name, field.NewPath("generation"))
		if err != nil {
			t.Fatal(err)
		}
		changed += owntest.Mutate(g)
		if g, _, err := tpu.ParsePodType(g.Name + "-8"); err == nil {
			changed += owntest.Mutate(g)
		}
	}
	for _, spec := range []tpu.SliceSpec{{Generation: "v6e", Topology: "4x4"}, {Generation: "v5p", Topology: "2x2x4"}} {
		sl, errs := spec.Resolve(tpu.TargetRay, tpu.FieldsUnder(nil))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		changed += owntest.Mutate(sl)
	}
	if changed == 0 {
		t.Fatal("nothing was changed; the check would be vacuous")
	}
	if got := validationSnapshot(t); got != want {
		t.Errorf("changing generations the package handed out changed the catalog or validation:\n%s\nwant\n%s", got, want)
	}
}

// TestLookupReturnsCopies: two lookups of one generation are two values;
// changing one leaves the other as it was.
func TestLookupReturnsCopies(t *testing.T) {
	t.Parallel()
	a, _ := tpu.LookupGeneration("v6e")
	b, _ := tpu.LookupGeneration("trillium")
	if a == b {
		t.Fatal("two lookups returned the same *Generation")
	}
	a.ChipsPerHostOptions[0] = 99
	a.Aliases[0] = "changed"
	a.MachineTypes[0].Chips = 99
	if b.ChipsPerHostOptions[0] == 99 || b.Aliases[0] == "changed" || b.MachineTypes[0].Chips == 99 {
		t.Errorf("a change to one lookup's slices reached another's: %+v", b)
	}
}
