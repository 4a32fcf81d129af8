package placement

import "github.com/raytpu/raytpu/field"

// The declarative rules of SliceSpec's `validate` tags, checked by hand on
// every Resolve: validator walks the struct by reflection, which was most
// of a valid slice's cost. Only when a check fails does Resolve call
// validator, whose errors (paths, types, details) the user gets, so they
// stay exactly what the tags say. tagrules_test.go proves the checks agree
// with validator on a table and a fuzz target, and fails when a tag is
// added or changed without updating tagsHold.

// tagsHold reports whether every `validate` tag of s holds, as validator
// would decide it:
//
//	ResourcesPerBundle  dive,gte=0   each value >= 0 (NaN fails)
//	NumSlices           gte=0
//	TPUResourcePerChip  gte=0
//	Strategy            omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD
func (s *SliceSpec) tagsHold() bool {
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

// tagErrors checks s's `validate` tags with validator and reports each
// failure at f's path for the field. Resolve calls it only when tagsHold
// is false; it takes s by value so that only this path moves a copy to the
// heap.
func tagErrors(s SliceSpec, f *Fields) field.ErrorList {
	return field.ValidateStructAt(&s, f.locate)
}
