package placement

import (
	"fmt"
	"math"

	"github.com/raytpu/raytpu/field"
)

// Validate checks a compiled slice group as a whole, as it is read back
// from a plan (a plan file edited by hand, a plan built in Go): every
// number and name it holds must be what compiling its own source fields
// gives. The source fields are Generation, Topology, ChipsPerHost,
// TPUResourcePerChip, Strategy, BundleResources and NumSlices; they are
// checked as a front end's are (the TPU catalog under Ray's rules, the
// limits table), and the derived ones (AcceleratorVersion,
// AcceleratorType, PodType, HostsPerSlice, BundlesPerSlice, MultiHost,
// the bundles of each placement group, the MEGASCALE_* entries) must
// agree with them. Every disagreement is an error at its path below path
// (plan.slices[0].podType), all at once.
func (g *SliceGroup) Validate(path *field.Path) field.ErrorList {
	if g == nil {
		return field.ErrorList{field.Required(path, "a compiled slice group")}
	}
	var errs field.ErrorList
	switch {
	case g.NumSlices < 1:
		errs = append(errs, field.Invalid(path.Child("numSlices"), g.NumSlices, "must be at least 1"))
	case g.NumSlices > MaxSlices:
		errs = append(errs, field.TooMany(path.Child("numSlices"), g.NumSlices, MaxSlices, SourceSlices))
	}
	if g.HeadReservationTimeoutSeconds < 0 || math.IsNaN(g.HeadReservationTimeoutSeconds) {
		errs = append(errs, field.Invalid(path.Child("headReservationTimeoutSeconds"), g.HeadReservationTimeoutSeconds, "cannot be negative; 0 waits indefinitely"))
	}
	// Recompile the shape from the source fields, at the plan's paths.
	spec := SliceSpec{
		Topology: g.Topology, Accelerator: g.Generation, ResourcesPerBundle: g.BundleResources,
		ChipsPerHost: g.ChipsPerHost, TPUResourcePerChip: g.TPUResourcePerChip, Strategy: g.Strategy,
	}
	shape, serrs := spec.Resolve(Fields{
		Topology:           path.Child("topology"),
		Accelerator:        path.Child("generation"),
		ChipsPerHost:       path.Child("chipsPerHost"),
		NumSlices:          path.Child("numSlices"),
		ResourcesPerBundle: path.Child("bundleResources"),
		Strategy:           path.Child("strategy"),
		TPUResourcePerChip: path.Child("tpuResourcePerChip"),
	})
	errs = append(errs, serrs...)
	switch {
	case g.ChipsPerHost < 1:
		errs = append(errs, field.Invalid(path.Child("chipsPerHost"), g.ChipsPerHost, "must be positive"))
	case g.TPUResourcePerChip < 1:
		errs = append(errs, field.Invalid(path.Child("tpuResourcePerChip"), g.TPUResourcePerChip, "must be positive"))
	case g.Strategy == "":
		errs = append(errs, field.Required(path.Child("strategy"), "one of "+fmt.Sprint(Strategies())))
	}
	perSlice := g.BundlesPerSlice
	if shape != nil {
		sl := shape.Slice
		derived := fmt.Sprintf("a %s %s slice of %d-chip hosts", sl.Generation.Name, sl.Topology, sl.ChipsPerHost)
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"acceleratorVersion", g.AcceleratorVersion, sl.Generation.RayVersion},
			{"acceleratorType", g.AcceleratorType, shape.accelType},
			{"podType", g.PodType, shape.podType},
			{"hostsPerSlice", g.HostsPerSlice, sl.Hosts()},
			{"bundlesPerSlice", g.BundlesPerSlice, shape.BundlesPerSlice},
			{"multiHost", g.MultiHost, sl.MultiHost()},
		} {
			if c.got != c.want {
				errs = append(errs, field.Invalid(path.Child(c.name), c.got, fmt.Sprintf("%s has %s %v", derived, c.name, c.want)))
			}
		}
		perSlice = shape.BundlesPerSlice
	}
	errs = append(errs, g.validateGroups(path, perSlice)...)
	return errs
}

// validateGroups checks the placement groups, the bundles and the
// MEGASCALE_* entries against NumSlices slices of perSlice bundles.
func (g *SliceGroup) validateGroups(path *field.Path, perSlice int) field.ErrorList {
	var errs field.ErrorList
	slicesOK := g.NumSlices >= 1 && g.NumSlices <= MaxSlices
	gp := path.Child("groups")
	switch {
	case len(g.Groups) == 0:
		return append(errs, field.Required(gp, "at least one placement group"))
	case slicesOK && len(g.Groups) != 1 && len(g.Groups) != g.NumSlices:
		errs = append(errs, field.Invalid(gp, len(g.Groups), fmt.Sprintf("must hold one placement group, or one per slice (%d)", g.NumSlices)))
	}
	total := 0
	for i, grp := range g.Groups {
		bp := gp.Index(i).Child("bundles")
		total += len(grp.Bundles)
		if len(grp.Bundles) == 0 {
			errs = append(errs, field.Required(bp, "at least one bundle"))
		}
		for j, b := range grp.Bundles {
			if b.Slice < 0 || b.Slice >= max(g.NumSlices, 1) {
				errs = append(errs, field.Invalid(bp.Index(j).Child("slice"), b.Slice,
					fmt.Sprintf("must name one of the group's %d slices (0 to %d)", max(g.NumSlices, 1), max(g.NumSlices, 1)-1)))
			}
		}
		if slicesOK && perSlice > 0 && len(g.Groups) == g.NumSlices && g.NumSlices > 1 && len(grp.Bundles) != perSlice && len(grp.Bundles) > 0 {
			errs = append(errs, field.Invalid(bp, len(grp.Bundles), fmt.Sprintf("has %d bundles; a slice has %d", len(grp.Bundles), perSlice)))
		}
	}
	if slicesOK && perSlice > 0 && (len(g.Groups) == 1 || g.NumSlices == 1) && total != perSlice*g.NumSlices {
		errs = append(errs, field.Invalid(gp.Index(0).Child("bundles"), total,
			fmt.Sprintf("has %d bundles; %d slices of %d bundles need %d", total, g.NumSlices, perSlice, perSlice*g.NumSlices)))
	}
	if n := len(g.Megascale); slicesOK && g.NumSlices > 1 && n != g.NumSlices {
		errs = append(errs, field.Invalid(path.Child("megascale"), n, fmt.Sprintf("has %d entries; a group of %d slices needs one per slice", n, g.NumSlices)))
	}
	for i, m := range g.Megascale {
		if m.NumSlices != g.NumSlices {
			errs = append(errs, field.Invalid(path.Child("megascale").Index(i).Child("numSlices"), m.NumSlices, fmt.Sprintf("must be the group's numSlices, %d", g.NumSlices)))
		}
		if m.Slice != i {
			errs = append(errs, field.Invalid(path.Child("megascale").Index(i).Child("slice"), m.Slice, fmt.Sprintf("must be %d, its place in the list", i)))
		}
	}
	if n := len(g.Heads); n > max(g.NumSlices, 1) {
		errs = append(errs, field.Invalid(path.Child("heads"), n, fmt.Sprintf("has %d head reservations; a group of %d slices holds at most one per slice", n, max(g.NumSlices, 1))))
	}
	return errs
}
