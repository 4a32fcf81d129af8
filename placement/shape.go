package placement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Shape is a [SliceSpec] checked against the TPU catalog: one slice's
// resolved geometry and worker bundle, before it is multiplied into
// slices. Resolve makes one, Group builds any number of slices from it, so
// a front end that derives the slice count from the shape (Ray Train's
// num_workers / workers per slice) resolves the catalog once.
type Shape struct {
	// Slice is the resolved slice; read-only.
	Slice *tpu.Slice
	// Strategy is the placement strategy (default SPREAD).
	Strategy Strategy
	// TPUResourcePerChip is the TPU resource per chip (default 1).
	TPUResourcePerChip int
	// BundleResources are the resources of every worker bundle, with
	// Ray's defaults for CPU and TPU filled in. Group copies the map into
	// each group and bundle it builds; a front end may add resources that
	// leave TPU alone before a Group (Ray Train adds
	// accelerator_type:<type>), which changes no group built earlier.
	BundleResources map[string]float64
	// BundlesPerSlice is the number of worker bundles in one slice.
	BundlesPerSlice int

	spec   SliceSpec
	fields Fields
	// lazy builds the paths of an error Group reports when the shape was
	// resolved by ResolveFunc (fields is then empty); nil otherwise.
	lazy func() Fields

	// What every Group writes, computed once by Resolve; headResource is
	// the head reservation's resource ("" for a single-host slice).
	topology, podType, accelType, headResource string
}

// Resolve checks every rule of s that does not depend on the slice count:
// the struct's field rules, the generation and topology against the
// catalog (once), and the worker bundle against the slice. Errors are
// reported at f's paths; an empty list means the Shape is usable.
func (s SliceSpec) Resolve(f Fields) (*Shape, field.ErrorList) {
	return s.resolve(f)
}

// ResolveFunc is Resolve for a caller whose paths cost something to build
// (a front end's paths below a deployment or a trainer): fields is called
// only when there is an error to report, by Resolve or by a later Group,
// and the errors are the ones Resolve(fields()) reports. A nil fields is
// an error: pass one (func() placement.Fields { return placement.FieldsUnder(p) }),
// or call Resolve.
func (s SliceSpec) ResolveFunc(fields func() Fields) (*Shape, field.ErrorList) {
	if fields == nil {
		return nil, field.ErrorList{field.Required(field.NewPath("fields"), "placement: nil fields func: pass one returning the spec's Fields (placement.FieldsUnder), or call SliceSpec.Resolve")}
	}
	sh, errs := s.resolve(Fields{})
	if len(errs) > 0 {
		// Resolving is deterministic: the same errors, at the real paths.
		return s.resolve(fields())
	}
	sh.lazy = fields
	return sh, nil
}

// paths returns the Fields errors are reported at. It builds them anew
// each time rather than keeping them, so Group stays free of writes.
func (sh *Shape) paths() Fields {
	if sh.lazy != nil {
		return sh.lazy()
	}
	return sh.fields
}

func (s SliceSpec) resolve(f Fields) (*Shape, field.ErrorList) {
	errs := s.validateFields(&f)
	if v, ok := s.ResourcesPerBundle[rayvocab.ResourceTPU]; ok && v == 0 {
		errs = append(errs, field.Invalid(f.bundleTPU(), v, "must be positive"))
	}
	// Limits first: nothing below grows with them, but a count past its
	// limit is reported even when the slice is valid.
	if s.TPUResourcePerChip > MaxTPUResourcePerChip {
		errs = append(errs, field.TooMany(f.TPUResourcePerChip, s.TPUResourcePerChip, MaxTPUResourcePerChip, SourceTPUResourcePerChip))
	}
	if len(s.Name) > MaxNameLength {
		errs = append(errs, field.TooMany(f.Name, len(s.Name), MaxNameLength, SourceNameLength))
	}
	if s.NumSlices > MaxSlices {
		errs = append(errs, field.TooMany(f.NumSlices, s.NumSlices, MaxSlices, SourceSlices))
	}
	if n := len(s.BundleLabelSelector); n > MaxBundles {
		errs = append(errs, field.TooMany(f.BundleLabelSelector, n, MaxBundles, SourceBundles))
	}
	for i, sel := range s.BundleLabelSelector[:min(len(s.BundleLabelSelector), MaxBundles)] {
		errs = append(errs, ValidateLabelSelector(f.BundleLabelSelector.Index(i), sel)...)
	}
	sl, serrs := tpu.SliceSpec{Generation: s.Accelerator, Topology: s.Topology, ChipsPerHost: s.ChipsPerHost}.
		Resolve(tpu.TargetRay, tpu.SliceFields{
			Generation:   f.Accelerator,
			Topology:     f.Topology,
			ChipsPerHost: f.ChipsPerHost,
		})
	errs = append(errs, serrs...)
	if sl == nil || s.TPUResourcePerChip < 0 || s.TPUResourcePerChip > MaxTPUResourcePerChip {
		return nil, errs
	}
	perChip := max(s.TPUResourcePerChip, 1)
	strategy := s.Strategy
	if strategy == "" {
		strategy = Spread
	}

	// Bundle resources: the user's, plus CPU: 1 and TPU: chips per host ×
	// TPU per chip when absent (Ray's get_tpu_worker_resources).
	bundle := make(map[string]float64, len(s.ResourcesPerBundle)+2)
	for k, v := range s.ResourcesPerBundle {
		bundle[k] = v
	}
	if _, ok := bundle[rayvocab.ResourceCPU]; !ok {
		bundle[rayvocab.ResourceCPU] = 1
	}
	if _, ok := bundle[rayvocab.ResourceTPU]; !ok {
		bundle[rayvocab.ResourceTPU] = float64(sl.ChipsPerHost * perChip)
	}
	tpuPerBundle := bundle[rayvocab.ResourceTPU]
	tpuPerSlice := float64(sl.Chips() * perChip)
	switch {
	case tpuPerBundle <= 0:
		// Reported above.
	case tpuPerBundle != float64(int64(tpuPerBundle)) || int64(tpuPerSlice)%int64(tpuPerBundle) != 0:
		errs = append(errs, field.Invalid(f.bundleTPU(), tpuPerBundle, fmt.Sprintf(
			"the %d TPU of a %s %s slice do not divide evenly into bundles of %s TPU", int(tpuPerSlice), sl.Generation.Name, sl.Topology, fmtNum(tpuPerBundle))))
	case !slices.Contains(validTPUPerWorker, tpuPerBundle):
		errs = append(errs, field.NotSupported(f.bundleTPU(), tpuPerBundle, []string{"1", "2", "4", "8"}).
			WithDetail("a Ray task or actor may request only 1, 2, 4 or 8 TPU"))
	case tpuPerSlice/tpuPerBundle > MaxBundles:
		errs = append(errs, field.Invalid(f.bundleTPU(), tpuPerBundle, fmt.Sprintf(
			"a %s %s slice would hold %d bundles of %s TPU, more than the %d a slice group holds; request more TPU per bundle",
			sl.Generation.Name, sl.Topology, int(tpuPerSlice/tpuPerBundle), fmtNum(tpuPerBundle), MaxBundles)))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	podType := sl.PodType()
	sh := &Shape{
		Slice:              sl,
		Strategy:           strategy,
		TPUResourcePerChip: perChip,
		BundleResources:    bundle,
		BundlesPerSlice:    int(tpuPerSlice / tpuPerBundle),
		spec:               s,
		fields:             f,
		topology:           sl.Topology.String(),
		podType:            podType,
		accelType:          sl.RayAcceleratorType(),
	}
	if sl.MultiHost() {
		sh.headResource = sl.HeadResource()
	}
	return sh, nil
}

// Group builds numSlices slices of the shape, as Ray's SlicePlacementGroup
// does: a head reservation per multi-host slice whose name the user did not
// fix, the worker placement group(s), and the MEGASCALE_* values of a
// multi-slice group. It checks what depends on the count: numSlices itself
// and the length of BundleLabelSelector. The group owns every map and
// slice in it: it shares none with the shape, with another group or with
// the spec (see SliceGroup). A nil Shape, or one not made by Resolve, is
// an error.
func (sh *Shape) Group(numSlices int) (*SliceGroup, field.ErrorList) {
	if sh == nil || sh.Slice == nil {
		return nil, field.ErrorList{field.Required(field.NewPath("shape"), "placement: nil or zero *Shape: use SliceSpec.Resolve")}
	}
	s, sl := &sh.spec, sh.Slice
	if numSlices < 1 {
		return nil, field.ErrorList{field.Invalid(sh.paths().NumSlices, numSlices, "must be at least 1")}
	}
	perSlice := sh.BundlesPerSlice
	// The limits, before anything that grows with numSlices: perSlice is
	// at most MaxBundles (Resolve), so the product cannot overflow.
	if numSlices > MaxSlices {
		return nil, field.ErrorList{field.TooMany(sh.paths().NumSlices, numSlices, MaxSlices, SourceSlices)}
	}
	if numSlices*perSlice > MaxBundles {
		return nil, field.ErrorList{field.TooMany(sh.paths().NumSlices, numSlices, MaxBundles/perSlice, fmt.Sprintf(
			"%d slices of %d bundles are %d bundles; %s, at most %d", numSlices, perSlice, numSlices*perSlice, SourceBundles, MaxBundles))}
	}
	numBundles := perSlice * numSlices
	if n := len(s.BundleLabelSelector); n > 0 && n != numBundles {
		return nil, field.ErrorList{field.Invalid(sh.paths().BundleLabelSelector, n,
			fmt.Sprintf("has %d entries; it must have one per bundle (%d)", n, numBundles))}
	}
	timeout := s.HeadReservationTimeout
	if timeout == 0 {
		timeout = DefaultHeadReservationTimeout
	}
	podType := sh.podType
	// One slice in one group, the common case, takes one allocation for
	// the group with its head reservation and placement group.
	var grp *SliceGroup
	var oneHead []HeadReservation
	var oneGroup []Group
	if numSlices == 1 && !s.PGPerSlice {
		blk := new(singleSliceGroup)
		grp, oneHead, oneGroup = &blk.g, blk.head[:0:1], blk.group[:]
	} else {
		grp = new(SliceGroup)
	}
	*grp = SliceGroup{
		Generation:         sl.Generation.Name,
		AcceleratorVersion: sl.Generation.RayVersion,
		AcceleratorType:    sh.accelType,
		Topology:           sh.topology,
		PodType:            podType,
		NumSlices:          numSlices,
		ChipsPerHost:       sl.ChipsPerHost,
		TPUResourcePerChip: sh.TPUResourcePerChip,
		HostsPerSlice:      sl.Hosts(),
		BundlesPerSlice:    perSlice,
		MultiHost:          sl.MultiHost(),
		Strategy:           sh.Strategy,
		BundleResources:    maps.Clone(sh.BundleResources),
	}
	if timeout > 0 {
		grp.HeadReservationTimeoutSeconds = timeout.Seconds()
	}
	if numSlices > 1 {
		grp.Megascale = make([]Megascale, numSlices)
		for si := range grp.Megascale {
			grp.Megascale[si] = Megascale{Slice: si, NumSlices: numSlices, Port: rayvocab.DefaultMegascalePort}
		}
	}
	// Every bundle of every slice in one backing array; with PGPerSlice
	// each group holds its slice's part.
	all := make([]Bundle, numBundles)
	for si := range numSlices {
		pin, fromHead := "", false
		if sl.MultiHost() {
			// A user selector naming the slice skips the head reservation.
			for b := range perSlice {
				if name := s.selector(si*perSlice + b)[rayvocab.LabelTPUSliceName]; name != "" {
					pin = name
					break
				}
			}
			if pin == "" {
				fromHead = true
				if grp.Heads == nil {
					if oneHead != nil {
						grp.Heads = oneHead
					} else {
						grp.Heads = make([]HeadReservation, 0, numSlices)
					}
				}
				grp.Heads = append(grp.Heads, HeadReservation{
					Slice:     si,
					Resources: map[string]float64{sh.headResource: 1},
					LabelSelector: map[string]string{
						rayvocab.LabelTPUWorkerID: "0",
						rayvocab.LabelTPUPodType:  podType,
					},
				})
			}
		}
		for b := range perSlice {
			gi := si*perSlice + b
			all[gi] = Bundle{
				Index:             gi,
				Slice:             si,
				Resources:         maps.Clone(sh.BundleResources),
				LabelSelector:     s.bundleSelector(gi, pin, fromHead),
				SliceNameFromHead: fromHead,
			}
		}
	}
	if !s.PGPerSlice {
		if oneGroup == nil {
			oneGroup = make([]Group, 1)
		}
		oneGroup[0] = Group{Name: s.Name, Strategy: sh.Strategy, Bundles: all}
		grp.Groups = oneGroup
		return grp, nil
	}
	grp.Groups = make([]Group, numSlices)
	for si := range numSlices {
		part := all[si*perSlice : (si+1)*perSlice : (si+1)*perSlice]
		for i := range part {
			part[i].Index = i
		}
		name := ""
		if s.Name != "" {
			name = s.Name + "_slice_" + strconv.Itoa(si)
		}
		grp.Groups[si] = Group{Name: name, Strategy: sh.Strategy, Bundles: part}
	}
	return grp, nil
}

// singleSliceGroup holds a one-slice group with its head reservation and
// its placement group, allocated together.
type singleSliceGroup struct {
	g     SliceGroup
	head  [1]HeadReservation
	group [1]Group
}

// bundleSelector is bundle i's static label selector: the user's, with the
// slice-name pin set when the user fixed the slice, or removed when the
// head reservation decides it. nil when empty.
func (s *SliceSpec) bundleSelector(i int, pin string, fromHead bool) map[string]string {
	user := s.selector(i)
	n := len(user)
	if fromHead {
		if _, ok := user[rayvocab.LabelTPUSliceName]; ok {
			n--
		}
	}
	if n == 0 && pin == "" {
		return nil
	}
	sel := make(map[string]string, n+1)
	for k, v := range user {
		sel[k] = v
	}
	if pin != "" {
		sel[rayvocab.LabelTPUSliceName] = pin
	}
	if fromHead {
		delete(sel, rayvocab.LabelTPUSliceName)
	}
	if len(sel) == 0 {
		return nil
	}
	return sel
}

// selector is the user's label selector of bundle i, or nil.
func (s *SliceSpec) selector(i int) map[string]string {
	if i < len(s.BundleLabelSelector) {
		return s.BundleLabelSelector[i]
	}
	return nil
}
