package placement_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// A nil or zero Shape and a nil fields func are Required errors; a nil
// SliceGroup answers zero values.
func TestNilAndZeroValues(t *testing.T) {
	for name, sh := range map[string]*placement.Shape{"nil": nil, "zero": new(placement.Shape)} {
		g, errs := sh.Group(1)
		if g != nil || len(errs) != 1 || errs[0].Type != field.TypeRequired || errs[0].Field != "shape" {
			t.Errorf("%s Shape: Group(1) = %v, %v; want one Required error at shape", name, g, errs)
		}
	}
	sh, errs := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4"}.ResolveFunc(nil)
	if sh != nil || len(errs) != 1 || errs[0].Type != field.TypeRequired || errs[0].Field != "fields" {
		t.Errorf("ResolveFunc(nil) = %v, %v; want one Required error at fields", sh, errs)
	}

	var g *placement.SliceGroup
	if g.Hosts() != 0 || g.Bundles() != nil || g.String() != "<nil>" {
		t.Errorf("nil SliceGroup: Hosts %d, Bundles %v, String %q", g.Hosts(), g.Bundles(), g.String())
	}
	if d := placement.DiagnoseSliceLandings(nil, []placement.RawLanding{{Bundles: 1}}); d != nil {
		t.Errorf("DiagnoseSliceLandings(nil) = %v, want none", d)
	}
}
