// Package tpu is the TPU generation catalog that every slice shape in raytpu
// is validated against.
//
// It knows each generation's geometry (2D or 3D torus, TensorCores and JAX
// devices per chip, chips per host), its names in Ray, GCE and GKE, its
// machine types, and its planning figures (HBM, peak bf16 FLOPS). It parses
// topology strings ("4x4", "2x2x2") and resolves a generation and topology
// into a [Slice]: chips, hosts, Ray pod type, GKE node labels and JAX device
// counts.
//
// Two rule sets decide whether a topology is valid: what Google Cloud and
// GKE provision ([TargetGKE]) and what Ray's slice placement accepts
// ([TargetRay], Ray's VALID_TPU_TOPOLOGY table). They differ: v4 8x16x16 is
// a documented GKE slice that Ray rejects, v6e 2x8 is accepted by Ray only.
// An error for a shape valid on one side only says so.
//
// The package is a leaf: it imports nothing else from raytpu but [field].
package tpu

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// MachineType is a GCE/GKE machine type of a TPU generation.
type MachineType struct {
	Name  string `json:"name"`
	Chips int    `json:"chips"`
}

// Generation describes one TPU generation. Every value the package hands
// out ([Generations], [LookupGeneration], [ResolveGeneration],
// [ParsePodType], [Slice].Generation) is a copy of the catalog's entry,
// with slices of its own: changing it changes no later lookup and no
// validation.
type Generation struct {
	// Name is raytpu's canonical name: v2, v3, v4, v5e, v5p, v6e, v7x.
	Name string `json:"name"`
	// Aliases are other accepted names (v5litepod, trillium, tpu7x, ...).
	Aliases []string `json:"aliases,omitempty"`
	// RayVersion is Ray's accelerator version (v5litepod for v5e, v7x).
	RayVersion string `json:"rayVersion"`
	// GCEPrefix is the prefix of GCE accelerator types (v5litepod-16, tpu7x-16).
	GCEPrefix string `json:"gcePrefix"`
	// Dims is 2 or 3: the rank of the chip torus.
	Dims int `json:"dims"`
	// CoresPerChip counts TensorCores per chip; pod type suffixes count
	// chips × CoresPerChip.
	CoresPerChip int `json:"coresPerChip"`
	// DevicesPerChip counts JAX devices per chip (v4 and v5p run megacore: 1).
	DevicesPerChip int `json:"devicesPerChip"`
	// ChipsPerHostOptions lists the host sizes the generation ships in.
	ChipsPerHostOptions []int `json:"chipsPerHostOptions"`
	// MachineTypes lists the GCE/GKE machine types, smallest first.
	MachineTypes []MachineType `json:"machineTypes,omitempty"`
	// GKEAccelerator is the value of the node label
	// cloud.google.com/gke-tpu-accelerator ("" when GKE has none).
	GKEAccelerator string `json:"gkeAccelerator,omitempty"`
	// GKEAcceleratorSingleHost overrides GKEAccelerator for single-host
	// slices where GKE uses a separate name (v3: tpu-v3-device).
	GKEAcceleratorSingleHost string `json:"gkeAcceleratorSingleHost,omitempty"`
	// HBMGiB is high-bandwidth memory per chip (approximate).
	HBMGiB float64 `json:"hbmGiB"`
	// PeakBF16TFLOPS is peak dense bf16 TFLOP/s per chip (approximate).
	PeakBF16TFLOPS float64 `json:"peakBf16Tflops"`
	// HBMBandwidthGBps is HBM bandwidth per chip in GB/s (approximate, 0 if unknown).
	HBMBandwidthGBps float64 `json:"hbmBandwidthGBps,omitempty"`
	// MaxChips is the largest documented slice.
	MaxChips int `json:"maxChips"`
	// Multislice reports whether several slices can be joined over DCN.
	Multislice bool `json:"multislice"`

	gke3D  gke3DRule // 3D generations only
	gke2D  []string  // 2D generations only: the documented shapes
	ray    []string  // Ray's VALID_TPU_TOPOLOGY for this generation, sorted
	raySet map[Topology]bool
	gke    []string // GKETopologies, computed once
	any    []string // ValidTopologies(TargetAny), computed once

	// The same lists parsed, for suggestions without parsing on the error path.
	rayT, gkeT, anyT []Topology
	// gke2DT and gke3DExtraT are gke2D and gke3D.extra parsed, for
	// checkGKE.
	gke2DT, gke3DExtraT []Topology
	// rayAcceleratorType is RayAcceleratorType's value, computed once.
	rayAcceleratorType string
	// names holds the pod type and head resource of each chip count of
	// the catalog's shapes (names.go); read-only after init.
	names map[int]sliceNames
}

// gke3DRule is the Google Cloud rule for 3D shapes.
type gke3DRule struct {
	extra    []string // always-valid shapes besides the sub-cubes (v7x 1x1x1)
	maxCubes int      // (A/4)(B/4)(C/4) at most this
	sorted   bool     // A <= B <= C required
}

// RayAcceleratorType is Ray's accelerator_type resource suffix and label
// value: "TPU-" + upper(RayVersion), e.g. TPU-V6E, TPU-V5LITEPOD; "" for
// a nil *Generation (the methods of Generation take a nil receiver: the
// string and list ones answer "" and nil, [Generation.CheckTopology] says
// what to pass).
func (g *Generation) RayAcceleratorType() string {
	if g == nil {
		return ""
	}
	if g.rayAcceleratorType != "" {
		return g.rayAcceleratorType // a catalog generation
	}
	return "TPU-" + strings.ToUpper(g.RayVersion)
}

// RayTopologies returns Ray's valid topologies for g, sorted by chip count
// then by shape (nil for a nil *Generation).
func (g *Generation) RayTopologies() []string {
	if g == nil {
		return nil
	}
	return slices.Clone(g.ray)
}

// MachineTypeFor returns the first machine type with the given chips per
// host, or "" if none (or g is nil).
func (g *Generation) MachineTypeFor(chipsPerHost int) string {
	if g == nil {
		return ""
	}
	for _, m := range g.MachineTypes {
		if m.Chips == chipsPerHost {
			return m.Name
		}
	}
	return ""
}

func (g *Generation) machineType(name string) (MachineType, bool) {
	for _, m := range g.MachineTypes {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	return MachineType{}, false
}

var subCubes = []string{"2x2x1", "2x2x2", "2x2x4", "2x4x4"}

// subCubesT is subCubes parsed.
var subCubesT = parseAll(subCubes)

// rayLarger3D mirrors Ray's construction of its larger 3D shapes: every
// AxBxC with each dimension a positive multiple of 4 up to the bounds, in
// any order.
func rayLarger3D(maxX, maxY, maxZ int) []string {
	var out []string
	for x := 4; x <= maxX; x += 4 {
		for y := 4; y <= maxY; y += 4 {
			for z := 4; z <= maxZ; z += 4 {
				out = append(out, Topology{dims: [3]int{x, y, z}, n: 3}.format())
			}
		}
	}
	return out
}

var generations = func() []*Generation {
	gens := []*Generation{
		{
			Name: "v2", RayVersion: "v2", GCEPrefix: "v2", Dims: 2, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions: []int{4},
			gke2D:               []string{"2x2", "4x4", "8x8", "8x16", "16x16"},
			ray:                 []string{"4x4", "4x8", "8x8", "8x16", "16x16"},
			HBMGiB:              16, PeakBF16TFLOPS: 46, MaxChips: 256,
		},
		{
			Name: "v3", RayVersion: "v3", GCEPrefix: "v3", Dims: 2, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions:      []int{4},
			MachineTypes:             []MachineType{{"ct3-hightpu-4t", 4}, {"ct3p-hightpu-4t", 4}},
			GKEAccelerator:           "tpu-v3-slice",
			GKEAcceleratorSingleHost: "tpu-v3-device",
			gke2D:                    []string{"2x2", "4x4", "4x8", "8x8", "8x16", "16x16", "16x32", "32x32"},
			ray:                      []string{"4x4", "4x8", "8x8", "8x16", "16x16", "16x32", "32x32"},
			HBMGiB:                   32, PeakBF16TFLOPS: 123, HBMBandwidthGBps: 900, MaxChips: 1024,
		},
		{
			Name: "v4", RayVersion: "v4", GCEPrefix: "v4", Dims: 3, CoresPerChip: 2, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{4},
			MachineTypes:        []MachineType{{"ct4p-hightpu-4t", 4}},
			GKEAccelerator:      "tpu-v4-podslice",
			gke3D:               gke3DRule{maxCubes: 64},
			ray:                 append(slices.Clone(subCubes), rayLarger3D(12, 12, 16)...),
			HBMGiB:              32, PeakBF16TFLOPS: 275, HBMBandwidthGBps: 1200, MaxChips: 4096, Multislice: true,
		},
		{
			Name: "v5e", Aliases: []string{"v5litepod", "v5lite", "v5lite-pod"}, RayVersion: "v5litepod", GCEPrefix: "v5litepod",
			Dims: 2, CoresPerChip: 1, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{1, 4, 8},
			MachineTypes:        []MachineType{{"ct5lp-hightpu-1t", 1}, {"ct5lp-hightpu-4t", 4}, {"ct5lp-hightpu-8t", 8}},
			GKEAccelerator:      "tpu-v5-lite-podslice",
			gke2D:               []string{"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"},
			ray:                 []string{"1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16"},
			HBMGiB:              16, PeakBF16TFLOPS: 197, HBMBandwidthGBps: 819, MaxChips: 256, Multislice: true,
		},
		{
			Name: "v5p", RayVersion: "v5p", GCEPrefix: "v5p", Dims: 3, CoresPerChip: 2, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{4},
			MachineTypes:        []MachineType{{"ct5p-hightpu-4t", 4}},
			GKEAccelerator:      "tpu-v5p-slice",
			gke3D:               gke3DRule{maxCubes: 96, sorted: true},
			ray:                 append(slices.Clone(subCubes), rayLarger3D(16, 16, 24)...),
			HBMGiB:              95, PeakBF16TFLOPS: 459, HBMBandwidthGBps: 2765, MaxChips: 6144, Multislice: true,
		},
		{
			Name: "v6e", Aliases: []string{"trillium"}, RayVersion: "v6e", GCEPrefix: "v6e",
			Dims: 2, CoresPerChip: 1, DevicesPerChip: 1,
			ChipsPerHostOptions: []int{1, 4, 8},
			MachineTypes:        []MachineType{{"ct6e-standard-1t", 1}, {"ct6e-standard-4t", 4}, {"ct6e-standard-8t", 8}},
			GKEAccelerator:      "tpu-v6e-slice",
			gke2D:               []string{"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"},
			ray:                 []string{"1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16"},
			HBMGiB:              32, PeakBF16TFLOPS: 918, HBMBandwidthGBps: 1640, MaxChips: 256, Multislice: true,
		},
		{
			Name: "v7x", Aliases: []string{"tpu7x", "ironwood"}, RayVersion: "v7x", GCEPrefix: "tpu7x",
			Dims: 3, CoresPerChip: 2, DevicesPerChip: 2,
			ChipsPerHostOptions: []int{1, 4},
			MachineTypes:        []MachineType{{"tpu7x-standard-1t", 1}, {"tpu7x-standard-4t", 4}, {"tpu7x-ultranet-4t", 4}},
			GKEAccelerator:      "tpu7x",
			gke3D:               gke3DRule{extra: []string{"1x1x1"}, maxCubes: 144, sorted: true},
			ray:                 []string{"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16"},
			HBMGiB:              192, PeakBF16TFLOPS: 2307, HBMBandwidthGBps: 7380, MaxChips: 9216, Multislice: true,
		},
	}
	for _, g := range gens {
		g.raySet = make(map[Topology]bool, len(g.ray))
		for _, t := range g.ray {
			g.raySet[MustParseTopology(t)] = true
		}
		sortTopologyStrings(g.ray)
		g.gke = g.computeGKETopologies()
		g.any = slices.Clone(g.ray)
		for _, t := range g.gke {
			if !g.raySet[MustParseTopology(t)] {
				g.any = append(g.any, t)
			}
		}
		sortTopologyStrings(g.any)
		g.rayT, g.gkeT, g.anyT = parseAll(g.ray), parseAll(g.gke), parseAll(g.any)
		g.gke2DT, g.gke3DExtraT = parseAll(g.gke2D), parseAll(g.gke3D.extra)
		g.rayAcceleratorType = g.RayAcceleratorType()
		g.initNames()
	}
	return gens
}()

func parseAll(list []string) []Topology {
	out := make([]Topology, len(list))
	for i, s := range list {
		out[i] = MustParseTopology(s)
	}
	return out
}

// topologies is ValidTopologies(target) parsed; read-only.
func (g *Generation) topologies(target Target) []Topology {
	switch target {
	case TargetRay:
		return g.rayT
	case TargetGKE:
		return g.gkeT
	}
	return g.anyT
}

// sortTopologyStrings sorts canonical topology strings by chip count, then
// by dimensions, parsing each string once.
func sortTopologyStrings(list []string) {
	ts := make([]Topology, len(list))
	for i, s := range list {
		ts[i], _ = ParseTopology(s)
	}
	slices.SortFunc(ts, compareTopologies)
	for i, t := range ts {
		list[i] = t.format()
	}
}

func compareTopologies(ta, tb Topology) int {
	if c := cmp.Compare(ta.Chips(), tb.Chips()); c != 0 {
		return c
	}
	for i := range ta.n {
		if c := cmp.Compare(ta.dims[i], tb.dims[i]); c != 0 {
			return c
		}
	}
	return 0
}

var byName = func() map[string]*Generation {
	m := map[string]*Generation{}
	for _, g := range generations {
		m[g.Name] = g
		for _, a := range g.Aliases {
			m[a] = g
		}
	}
	return m
}()

// clone returns a copy of g with exported slices of its own. The
// unexported lists and maps, which nothing outside the package can reach,
// stay shared with the catalog and are never written after init.
func (g *Generation) clone() *Generation {
	c := *g
	c.Aliases = slices.Clone(g.Aliases)
	c.ChipsPerHostOptions = slices.Clone(g.ChipsPerHostOptions)
	c.MachineTypes = slices.Clone(g.MachineTypes)
	return &c
}

// Generations returns a copy of the catalog, oldest generation first.
func Generations() []*Generation {
	out := make([]*Generation, len(generations))
	for i, g := range generations {
		out[i] = g.clone()
	}
	return out
}

// GenerationNames returns the canonical names, oldest first.
func GenerationNames() []string {
	out := make([]string, len(generations))
	for i, g := range generations {
		out[i] = g.Name
	}
	return out
}

// acceptedNames lists every accepted spelling, for suggestions.
func acceptedNames() []string {
	var out []string
	for _, g := range generations {
		out = append(out, g.Name)
		out = append(out, g.Aliases...)
	}
	return out
}

// normalizeName lowers s and removes Ray's "TPU-" prefix, so that TPU-V6E,
// tpu-v5litepod and V4 map onto catalog names.
func normalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if rest, ok := strings.CutPrefix(s, "tpu-"); ok {
		s = rest
	}
	return s
}

// LookupGeneration finds a generation by any accepted name, case-insensitively:
// raytpu's (v6e), Ray's (TPU-V6E, v5litepod, v7x), GCE's (tpu7x) or the
// marketing name (trillium, ironwood). The generation is the caller's copy.
func LookupGeneration(name string) (*Generation, bool) {
	if g, ok := lookup(name); ok {
		return g.clone(), true
	}
	return nil, false
}

// lookup is LookupGeneration returning the catalog's own entry, for the
// package's rules; it never leaves the package.
func lookup(name string) (*Generation, bool) {
	g, ok := byName[normalizeName(name)]
	return g, ok
}

// ResolveGeneration is LookupGeneration with a field error: Required for an
// empty name, NotSupported (with the nearest name) for an unknown one. The
// generation is the caller's copy.
func ResolveGeneration(name string, path *field.Path) (*Generation, *field.Error) {
	g, err := resolveGeneration(name, path)
	if err != nil {
		return nil, err
	}
	return g.clone(), nil
}

// resolveGeneration is ResolveGeneration returning the catalog's own entry.
func resolveGeneration(name string, path *field.Path) (*Generation, *field.Error) {
	if strings.TrimSpace(name) == "" {
		return nil, field.Required(path, "a TPU generation: one of "+strings.Join(GenerationNames(), ", "))
	}
	if g, ok := lookup(name); ok {
		return g, nil
	}
	e := field.NotSupported(path, name, GenerationNames())
	if g, chips, kind, ok := generationOfName(name); ok {
		// A pod type, a GKE accelerator or a machine type: its generation.
		detail := fmt.Sprintf("%s, not a generation: %s is accelerator %s", kind, strings.TrimSpace(name), g.Name)
		if t, found := g.TopologyForChips(chips); chips > 0 && found {
			detail += ", topology " + t.String()
		}
		e.Suggest([]string{g.Name})
		return nil, e.WithDetail(detail)
	}
	// The nearest spellings, each for its generation, once.
	var near []string
	for _, s := range field.NearestAll(normalizeName(name), acceptedNames()) {
		if g, ok := byName[s]; ok && !slices.Contains(near, g.Name) {
			near = append(near, g.Name)
		}
	}
	e.Suggest(near)
	return nil, e
}
