package tpu

import (
	"strconv"

	"github.com/raytpu/raytpu/rayvocab"
)

// The names a resolved slice is written with (its topology, Ray's pod type
// and head resource) are built once for every shape in the catalog, so
// that resolving a catalog shape and writing its names allocates nothing.
// A shape outside the catalog builds its names on each call, as before.

// sliceNames are the names of the slices of one generation with the same
// chip count.
type sliceNames struct {
	podType, headResource string
}

// topologyNames maps every catalog shape (any generation, any target) to
// its canonical string; read-only after init.
var topologyNames = func() map[Topology]string {
	m := map[Topology]string{}
	for _, g := range generations {
		for _, list := range [][]Topology{g.rayT, g.gkeT, g.anyT} {
			for _, t := range list {
				m[t] = t.format()
			}
		}
	}
	return m
}()

// initNames fills g.names for the chip counts of g's catalog shapes.
func (g *Generation) initNames() {
	g.names = map[int]sliceNames{}
	for _, t := range g.anyT {
		chips := t.Chips()
		if _, ok := g.names[chips]; !ok {
			pod := g.formatPodType(chips)
			g.names[chips] = sliceNames{podType: pod, headResource: rayvocab.HeadResource(pod)}
		}
	}
}

func (g *Generation) formatPodType(chips int) string {
	return g.RayVersion + "-" + strconv.Itoa(chips*g.CoresPerChip)
}

// PodType is Ray's pod type for a slice of the given chip count:
// "<RayVersion>-<chips × TensorCores per chip>", e.g. v6e-16, v4-16, v7x-16;
// "" for a nil *Generation.
func (g *Generation) PodType(chips int) string {
	if g == nil {
		return ""
	}
	if n, ok := g.names[chips]; ok {
		return n.podType
	}
	return g.formatPodType(chips)
}

// HeadResource is the custom resource Ray gives worker 0 of the slice,
// e.g. TPU-v6e-16-head; "" for a nil Slice or one without a Generation.
func (s *Slice) HeadResource() string {
	if s == nil || s.Generation == nil {
		return ""
	}
	if n, ok := s.Generation.names[s.Chips()]; ok {
		return n.headResource
	}
	return rayvocab.HeadResource(s.PodType())
}

// String renders the canonical form, e.g. "2x2x2".
func (t Topology) String() string {
	if s, ok := topologyNames[t]; ok {
		return s
	}
	return t.format()
}
