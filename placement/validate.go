package placement

import (
	"maps"
	"slices"

	"github.com/raytpu/raytpu/field"
)

// SliceSpec's own field rules, the ones that need no catalog and no other
// field, checked by hand in plain Go as every rule of raytpu is: one
// function for the type, its messages here.
//
//	ResourcesPerBundle  every value >= 0 (NaN is refused)   Invalid at resourcesPerBundle[key], keys in order
//	NumSlices           >= 0 (0: one slice)                  Invalid
//	TPUResourcePerChip  >= 0 (0: 1)                          Invalid
//	Strategy            "" or one of Strategies()            NotSupported

// Messages of SliceSpec's field rules.
const (
	msgResourceNegative  = "cannot be negative"
	msgNumSlicesNegative = "cannot be negative; 0 means one slice"
	msgPerChipNegative   = "cannot be negative; 0 means 1"
)

// fieldsHold reports whether every rule of validateFields holds; it
// allocates nothing, so a valid spec costs no error list.
func (s *SliceSpec) fieldsHold() bool {
	if s.NumSlices < 0 || s.TPUResourcePerChip < 0 {
		return false
	}
	if s.Strategy != "" && !s.Strategy.Valid() {
		return false
	}
	for _, v := range s.ResourcesPerBundle {
		if !(v >= 0) {
			return false
		}
	}
	return true
}

// validateFields reports every broken field rule of s at f's paths, in the
// order of SliceSpec's fields.
func (s *SliceSpec) validateFields(f *Fields) field.ErrorList {
	if s.fieldsHold() {
		return nil
	}
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(s.ResourcesPerBundle)) {
		if v := s.ResourcesPerBundle[k]; !(v >= 0) {
			errs = append(errs, field.Invalid(f.ResourcesPerBundle.Key(k), v, msgResourceNegative))
		}
	}
	if s.NumSlices < 0 {
		errs = append(errs, field.Invalid(f.NumSlices, s.NumSlices, msgNumSlicesNegative))
	}
	if s.TPUResourcePerChip < 0 {
		errs = append(errs, field.Invalid(f.TPUResourcePerChip, s.TPUResourcePerChip, msgPerChipNegative))
	}
	if s.Strategy != "" && !s.Strategy.Valid() {
		errs = append(errs, field.NotSupported(f.Strategy, string(s.Strategy), Strategies()))
	}
	return errs
}
