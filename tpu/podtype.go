package tpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// ParsePodType parses a pod type in Ray's or GCE's form (v6e-16,
// v5litepod-16, v4-16, tpu7x-16, v7x-16) into its generation and chip count.
// The suffix counts TensorCores, so it must be a multiple of the
// generation's cores per chip. The generation is the caller's copy.
func ParsePodType(s string) (*Generation, int, error) {
	name, count, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok || name == "" || count == "" {
		return nil, 0, fmt.Errorf("pod type %q: want <generation>-<cores>, e.g. v6e-16 or v4-8", s)
	}
	g, found := LookupGeneration(name)
	if !found {
		return nil, 0, fmt.Errorf("pod type %q: unknown generation %q (valid: %s)", s, name, strings.Join(GenerationNames(), ", "))
	}
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		return nil, 0, fmt.Errorf("pod type %q: size %q is not a positive integer", s, count)
	}
	if n%g.CoresPerChip != 0 {
		return nil, 0, fmt.Errorf("pod type %q: %s counts %d TensorCores per chip, so the size must be a multiple of %d", s, g.Name, g.CoresPerChip, g.CoresPerChip)
	}
	return g, n / g.CoresPerChip, nil
}

// TopologyForChips returns the canonical topology of a slice with the given
// chip count, the conventional shape of that pod type: among the shapes with that many chips written with sorted dimensions
// (2x2x1 counts as sorted), prefer one both Ray and GKE accept, then one
// either accepts; among those, the most compact (smallest largest
// dimension, then smallest next one). v6e 16 chips is 4x4 (not Ray's 2x8),
// v4 256 chips is 4x8x8 (not 4x4x16). It returns false when no shape has
// that many chips, or g is nil.
func (g *Generation) TopologyForChips(chips int) (Topology, bool) {
	if g == nil {
		return Topology{}, false
	}
	var best Topology
	bestBoth := false
	for _, s := range g.any {
		t := MustParseTopology(s)
		if t.Chips() != chips || !canonicalOrder(t) {
			continue
		}
		both := g.checkRay(t) == "" && g.checkGKE(t) == ""
		switch {
		case best.IsZero(),
			both && !bestBoth,
			both == bestBoth && moreCompact(t, best):
			best, bestBoth = t, both
		}
	}
	return best, !best.IsZero()
}

// canonicalOrder reports whether t is written with A <= B (<= C); 2x2x1,
// the single-host 3D shape, is the one exception.
func canonicalOrder(t Topology) bool {
	if t.n == 3 && t.dims == [3]int{2, 2, 1} {
		return true
	}
	for i := 1; i < t.n; i++ {
		if t.dims[i-1] > t.dims[i] {
			return false
		}
	}
	return true
}

// moreCompact compares the dimensions of a and b from largest to smallest
// and reports whether a's are smaller first.
func moreCompact(a, b Topology) bool {
	da, db := a.dims, b.dims
	slices.Sort(da[:a.n])
	slices.Sort(db[:b.n])
	slices.Reverse(da[:a.n])
	slices.Reverse(db[:b.n])
	return slices.Compare(da[:a.n], db[:b.n]) < 0
}

// generationOfName finds the generation a name of another kind stands
// for: a pod type (v6e-16, v5litepod-16, tpu7x-16), a GKE accelerator
// label value (tpu-v6e-slice, tpu-v5-lite-podslice) or a machine type
// (ct6e-standard-4t). chips is the pod type's chip count (0 for the other
// kinds); kind says what s was read as. ok is false for anything else.
func generationOfName(s string) (g *Generation, chips int, kind string, ok bool) {
	s = strings.TrimSpace(s)
	for _, gen := range generations {
		if strings.EqualFold(s, gen.GKEAccelerator) || gen.GKEAcceleratorSingleHost != "" && strings.EqualFold(s, gen.GKEAcceleratorSingleHost) {
			return gen, 0, "a GKE accelerator name", true
		}
		if _, found := gen.machineType(s); found {
			return gen, 0, "a machine type", true
		}
	}
	name, count, cut := strings.Cut(s, "-")
	if !cut {
		return nil, 0, "", false
	}
	gen, found := lookup(name)
	n, err := strconv.Atoi(count)
	if !found || err != nil || n <= 0 || n%gen.CoresPerChip != 0 {
		return nil, 0, "", false
	}
	return gen, n / gen.CoresPerChip, "a pod type", true
}

// podTypeTopology reports a topology given as a pod type ("v5litepod-16",
// "v5e-16" for 4x4 on v5e), at p: NotSupported, its suggestion the pod
// type's conventional shape, its detail naming the generation and shape to
// set. It returns nil for anything that is not a pod type with a shape.
func podTypeTopology(p *field.Path, topology string) *field.Error {
	g, chips, kind, ok := generationOfName(topology)
	if !ok || chips == 0 {
		return nil
	}
	t, ok := g.TopologyForChips(chips)
	if !ok {
		return nil
	}
	e := field.NotSupported(p, topology, []string{t.String()}).WithDetail(fmt.Sprintf(
		"%s, not a topology: %s is accelerator %s, topology %s", kind, strings.TrimSpace(topology), g.Name, t))
	e.Suggest([]string{t.String()})
	return e
}
