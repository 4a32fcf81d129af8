package tpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Target names the rule set a topology is validated under.
type Target string

const (
	// TargetRay: Ray's slice placement (ray.util.tpu), which accepts only the
	// shapes in Ray's VALID_TPU_TOPOLOGY table.
	TargetRay Target = "ray"
	// TargetGKE: what Google Cloud and GKE provision.
	TargetGKE Target = "gke"
	// TargetAny accepts a shape valid under either rule set; the resolved
	// Slice reports each verdict in RayValid and GKEValid.
	TargetAny Target = ""
)

// GKE node label and resource names.
const (
	LabelGKEAccelerator = "cloud.google.com/gke-tpu-accelerator"
	LabelGKETopology    = "cloud.google.com/gke-tpu-topology"
	ResourceGKETPU      = "google.com/tpu"
)

// CheckTopology reports why t is not a valid slice of g under target, or ""
// when it is. TargetAny accepts a shape either rule set accepts. A nil
// *Generation accepts nothing: the reason names the lookup to use.
func (g *Generation) CheckTopology(t Topology, target Target) string {
	if g == nil {
		return nilGeneration
	}
	switch target {
	case TargetRay:
		return g.checkRay(t)
	case TargetGKE:
		return g.checkGKE(t)
	default:
		r, k := g.checkRay(t), g.checkGKE(t)
		if r == "" || k == "" {
			return ""
		}
		return k
	}
}

func (g *Generation) rankReason(t Topology) string {
	if t.Rank() != g.Dims {
		if g.Dims == 3 {
			return fmt.Sprintf("%s is a 3D torus: want AxBxC, e.g. 2x2x2", g.Name)
		}
		return fmt.Sprintf("%s is a 2D torus: want AxB, e.g. 4x4", g.Name)
	}
	return ""
}

func (g *Generation) checkRay(t Topology) string {
	if r := g.rankReason(t); r != "" {
		return r
	}
	if !g.raySet[t] {
		return fmt.Sprintf("not in Ray's valid %s topologies", g.RayVersion)
	}
	return ""
}

func (g *Generation) checkGKE(t Topology) string {
	if r := g.rankReason(t); r != "" {
		return r
	}
	// The parsed lists hold the same shapes as the strings: a Topology
	// equals another exactly when their canonical strings do.
	if g.Dims == 2 {
		if g.GKEAccelerator == "" && !slices.Contains(g.gke2DT, t) {
			return fmt.Sprintf("not a documented %s slice", g.Name)
		}
		if !slices.Contains(g.gke2DT, t) {
			return fmt.Sprintf("not a %s slice GKE provisions", g.Name)
		}
		return ""
	}
	if slices.Contains(subCubesT, t) || slices.Contains(g.gke3DExtraT, t) {
		return ""
	}
	d := t.dims
	if d[0]%4 != 0 || d[1]%4 != 0 || d[2]%4 != 0 {
		return fmt.Sprintf("beyond %s, every dimension of a %s slice must be a multiple of 4", strings.Join(subCubes, ", "), g.Name)
	}
	if g.gke3D.sorted && !(d[0] <= d[1] && d[1] <= d[2]) {
		return fmt.Sprintf("%s slices are written with A <= B <= C", g.Name)
	}
	if cubes := (d[0] / 4) * (d[1] / 4) * (d[2] / 4); cubes > g.gke3D.maxCubes {
		return fmt.Sprintf("%d cubes of 4x4x4 exceed the %s maximum of %d (%d chips)", cubes, g.Name, g.gke3D.maxCubes, g.MaxChips)
	}
	return ""
}

// GKETopologies lists the shapes GKE provisions: for 2D generations the
// documented list; for 3D ones the sub-cube shapes plus every sorted
// multiple-of-4 shape within the cube limit, by chip count (nil for a nil
// *Generation).
func (g *Generation) GKETopologies() []string {
	if g == nil {
		return nil
	}
	return slices.Clone(g.gke)
}

// nilGeneration is the reason a nil *Generation gives.
const nilGeneration = "tpu: nil *Generation: use tpu.LookupGeneration or tpu.ResolveGeneration"

func (g *Generation) computeGKETopologies() []string {
	if g.Dims == 2 {
		return slices.Clone(g.gke2D)
	}
	out := append(slices.Clone(g.gke3D.extra), subCubes...)
	for a := 4; a*4*4 <= g.gke3D.maxCubes*64; a += 4 {
		for b := a; a*b*4 <= g.gke3D.maxCubes*64; b += 4 {
			for c := b; a*b*c <= g.gke3D.maxCubes*64; c += 4 {
				out = append(out, Topology{dims: [3]int{a, b, c}, n: 3}.format())
			}
		}
	}
	sortTopologyStrings(out)
	return out
}

// ValidTopologies lists the valid shapes under target (TargetAny: the
// union); nil for a nil *Generation.
func (g *Generation) ValidTopologies(target Target) []string {
	if g == nil {
		return nil
	}
	switch target {
	case TargetRay:
		return g.RayTopologies()
	case TargetGKE:
		return g.GKETopologies()
	}
	return slices.Clone(g.any)
}

// DefaultChipsPerHost is the host size when neither a machine type nor an
// override is given. It follows Ray's get_chips_per_host: on v5e and v6e the
// single-host shapes 1x1, 2x2 and 2x4 put the whole slice on one host; every
// other shape has 4 chips per host. v7x 1x1x1 (a shape Ray does not list)
// is one chip on a 1-chip host. A nil *Generation has no host size: 0.
func (g *Generation) DefaultChipsPerHost(t Topology) int {
	if g == nil {
		return 0
	}
	if (g.RayVersion == "v5litepod" || g.RayVersion == "v6e") && (t == topo1x1 || t == topo2x2 || t == topo2x4) {
		return t.Chips()
	}
	if g.Name == "v7x" && t == topo1x1x1 {
		return 1
	}
	return 4
}

// The shapes DefaultChipsPerHost singles out.
var (
	topo1x1   = Topology{dims: [3]int{1, 1}, n: 2}
	topo2x2   = Topology{dims: [3]int{2, 2}, n: 2}
	topo2x4   = Topology{dims: [3]int{2, 4}, n: 2}
	topo1x1x1 = Topology{dims: [3]int{1, 1, 1}, n: 3}
)

// GCEAcceleratorType is the GCE accelerator type, e.g. v5litepod-16,
// tpu7x-16; "" for a nil *Generation.
func (g *Generation) GCEAcceleratorType(chips int) string {
	if g == nil {
		return ""
	}
	return g.GCEPrefix + "-" + strconv.Itoa(chips*g.CoresPerChip)
}
