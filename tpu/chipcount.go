package tpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// ChipCountTopology reports a topology given as a bare number ("16"
// instead of "4x4"), a mix-up of a shape with a chip count (or with the
// number of a pod type such as v4-16). It returns nil for anything else,
// which the slice resolution then checks. SliceSpec.Resolve reports it for
// every front end, at the front end's topology path.
//
// The error is NotSupported at p, its valid values the shapes of the
// generation under target with that many chips, and its detail also names
// the shape whose Ray pod type carries that number (on v4, "16" in v4-16
// counts TensorCores: 2x2x2). Without a known generation it lists those
// shapes for every generation.
func ChipCountTopology(p *field.Path, topology, generation string, target Target) *field.Error {
	n, err := strconv.Atoi(strings.TrimSpace(topology))
	if err != nil || n <= 0 {
		return nil
	}
	gens := generations
	if g, ok := lookup(generation); ok {
		gens = []*Generation{g}
	}
	var valid, notes []string
	for _, g := range gens {
		var withChips []string
		names, shapes := g.ValidTopologies(target), g.topologies(target)
		for i, t := range shapes {
			if t.Chips() == n {
				withChips = append(withChips, names[i])
			}
		}
		// The pod type <version>-n counts TensorCores: its conventional
		// shape, when n is one.
		podShape := ""
		if n%g.CoresPerChip == 0 {
			if t, ok := g.TopologyForChips(n / g.CoresPerChip); ok {
				podShape = t.String()
			}
		}
		valid = append(valid, withChips...)
		switch {
		case len(withChips) > 0 && len(gens) > 1:
			notes = append(notes, fmt.Sprintf("%s: %s", g.Name, strings.Join(withChips, ", ")))
		case len(withChips) > 0:
			notes = append(notes, fmt.Sprintf("%s shapes of %d chips: %s", g.Name, n, strings.Join(withChips, ", ")))
		case len(gens) == 1 && target == TargetRay:
			notes = append(notes, fmt.Sprintf("no %s slice in Ray's table has %d chips", g.Name, n))
		case len(gens) == 1:
			notes = append(notes, fmt.Sprintf("no %s slice has %d chips", g.Name, n))
		}
		if podShape != "" && podShape != strings.Join(withChips, "") {
			notes = append(notes, fmt.Sprintf("pod type %s-%d is %s", g.RayVersion, n, podShape))
		}
	}
	if len(gens) > 1 && len(valid) > 0 {
		notes = append([]string{fmt.Sprintf("shapes of %d chips", n)}, notes...)
	}
	e := field.NotSupported(p, topology, valid).
		WithDetail("a chip count, not a topology: give the slice's shape (AxB or AxBxC); " + strings.Join(notes, "; "))
	if len(valid) == 1 {
		e.Suggest([]string{valid[0]})
	}
	return e
}
