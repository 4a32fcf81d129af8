package tpu

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
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
// when it is. TargetAny accepts a shape either rule set accepts.
func (g *Generation) CheckTopology(t Topology, target Target) string {
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
	s := t.String()
	if g.Dims == 2 {
		if g.GKEAccelerator == "" && !slices.Contains(g.gke2D, s) {
			return fmt.Sprintf("not a documented %s slice", g.Name)
		}
		if !slices.Contains(g.gke2D, s) {
			return fmt.Sprintf("not a %s slice GKE provisions", g.Name)
		}
		return ""
	}
	if slices.Contains(subCubes, s) || slices.Contains(g.gke3D.extra, s) {
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
// multiple-of-4 shape within the cube limit, by chip count.
func (g *Generation) GKETopologies() []string { return slices.Clone(g.gke) }

func (g *Generation) computeGKETopologies() []string {
	if g.Dims == 2 {
		return slices.Clone(g.gke2D)
	}
	out := append(slices.Clone(g.gke3D.extra), subCubes...)
	for a := 4; a*4*4 <= g.gke3D.maxCubes*64; a += 4 {
		for b := a; a*b*4 <= g.gke3D.maxCubes*64; b += 4 {
			for c := b; a*b*c <= g.gke3D.maxCubes*64; c += 4 {
				out = append(out, Topology{dims: [3]int{a, b, c}, n: 3}.String())
			}
		}
	}
	sortTopologyStrings(out)
	return out
}

// ValidTopologies lists the valid shapes under target (TargetAny: the union).
func (g *Generation) ValidTopologies(target Target) []string {
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
// is one chip on a 1-chip host.
func (g *Generation) DefaultChipsPerHost(t Topology) int {
	s := t.String()
	if (g.RayVersion == "v5litepod" || g.RayVersion == "v6e") && (s == "1x1" || s == "2x2" || s == "2x4") {
		return t.Chips()
	}
	if g.Name == "v7x" && s == "1x1x1" {
		return 1
	}
	return 4
}

// PodType is Ray's pod type for a slice of the given chip count:
// "<RayVersion>-<chips × TensorCores per chip>", e.g. v6e-16, v4-16, v7x-16.
func (g *Generation) PodType(chips int) string {
	return g.RayVersion + "-" + strconv.Itoa(chips*g.CoresPerChip)
}

// GCEAcceleratorType is the GCE accelerator type, e.g. v5litepod-16, tpu7x-16.
func (g *Generation) GCEAcceleratorType(chips int) string {
	return g.GCEPrefix + "-" + strconv.Itoa(chips*g.CoresPerChip)
}

// Slice is a resolved TPU slice: one generation, one topology, one host size.
type Slice struct {
	Generation *Generation
	Topology   Topology
	// ChipsPerHost is the resolved host size (machine type, override, or
	// the default rule).
	ChipsPerHost int
	// MachineType is the GCE machine type of each host ("" when the
	// generation has none).
	MachineType string
	// RayValid and GKEValid give each rule set's verdict on the topology;
	// RayReason and GKEReason say why not.
	RayValid, GKEValid   bool
	RayReason, GKEReason string
}

// Chips is the number of chips in the slice.
func (s *Slice) Chips() int { return s.Topology.Chips() }

// Hosts is chips / chips per host (at least 1).
func (s *Slice) Hosts() int { return max(1, s.Chips()/s.ChipsPerHost) }

// MultiHost reports whether the slice spans more than one host. Ray treats a
// slice as single-host when chips <= chips per host.
func (s *Slice) MultiHost() bool { return s.Chips() > s.ChipsPerHost }

// PodType is Ray's pod type (label ray.io/tpu-pod-type), e.g. v6e-16.
func (s *Slice) PodType() string { return s.Generation.PodType(s.Chips()) }

// GCEAcceleratorType is the GCE accelerator type, e.g. tpu7x-16.
func (s *Slice) GCEAcceleratorType() string { return s.Generation.GCEAcceleratorType(s.Chips()) }

// RayAcceleratorType is Ray's accelerator type, e.g. TPU-V6E.
func (s *Slice) RayAcceleratorType() string { return s.Generation.RayAcceleratorType() }

// HeadResource is the custom resource Ray gives worker 0 of the slice,
// e.g. TPU-v6e-16-head.
func (s *Slice) HeadResource() string { return rayvocab.HeadResource(s.PodType()) }

// GKEAccelerator is the value of cloud.google.com/gke-tpu-accelerator, or
// "" when GKE does not offer the generation.
func (s *Slice) GKEAccelerator() string {
	g := s.Generation
	if g.GKEAcceleratorSingleHost != "" && !s.MultiHost() {
		return g.GKEAcceleratorSingleHost
	}
	return g.GKEAccelerator
}

// GKENodeSelector is the node selector a GKE pod of this slice carries.
func (s *Slice) GKENodeSelector() map[string]string {
	if s.GKEAccelerator() == "" {
		return nil
	}
	return map[string]string{
		LabelGKEAccelerator: s.GKEAccelerator(),
		LabelGKETopology:    s.Topology.String(),
	}
}

// DevicesPerHost is the JAX device count on each host.
func (s *Slice) DevicesPerHost() int { return s.ChipsPerHost * s.Generation.DevicesPerChip }

// Devices is the JAX device count of the whole slice.
func (s *Slice) Devices() int { return s.Chips() * s.Generation.DevicesPerChip }

// HBMGiB is the slice's total HBM (approximate).
func (s *Slice) HBMGiB() float64 { return float64(s.Chips()) * s.Generation.HBMGiB }

// PeakBF16TFLOPS is the slice's total peak bf16 TFLOP/s (approximate).
func (s *Slice) PeakBF16TFLOPS() float64 { return float64(s.Chips()) * s.Generation.PeakBF16TFLOPS }

// SliceSpec names a slice as a user writes it.
type SliceSpec struct {
	// Generation in any accepted spelling (v6e, TPU-V6E, trillium). Required.
	Generation string
	// Topology, AxB or AxBxC. Required.
	Topology string
	// ChipsPerHost overrides the host size. Optional. Default: the machine
	// type's, else DefaultChipsPerHost.
	ChipsPerHost int
	// MachineType fixes the host size (ct6e-standard-8t). Optional.
	MachineType string
}

// SliceFields are the paths errors of a SliceSpec are reported under.
type SliceFields struct {
	Generation, Topology, ChipsPerHost, MachineType *field.Path
}

// FieldsUnder returns the default paths below p: generation, topology,
// chipsPerHost, machineType.
func FieldsUnder(p *field.Path) SliceFields {
	child := func(n string) *field.Path {
		if p == nil {
			return field.NewPath(n)
		}
		return p.Child(n)
	}
	return SliceFields{child("generation"), child("topology"), child("chipsPerHost"), child("machineType")}
}

// Resolve validates s under target and returns the slice, or every problem
// found. Under TargetRay a shape GKE accepts but Ray rejects is an error that
// says so, and the other way round.
func (s SliceSpec) Resolve(target Target, f SliceFields) (*Slice, field.ErrorList) {
	var errs field.ErrorList
	g, gerr := ResolveGeneration(s.Generation, f.Generation)
	if gerr != nil {
		errs = append(errs, gerr)
	}
	var topo Topology
	if strings.TrimSpace(s.Topology) == "" {
		errs = append(errs, field.Required(f.Topology, "a slice topology, AxB or AxBxC (e.g. 4x4, 2x2x2)"))
	} else if t, err := ParseTopology(s.Topology); err != nil {
		errs = append(errs, field.Invalid(f.Topology, s.Topology, err.Error()))
	} else {
		topo = t
	}
	if g == nil || topo.IsZero() {
		return nil, append(errs, s.checkHostFields(g, f)...)
	}
	sl := &Slice{Generation: g, Topology: topo}
	sl.RayReason, sl.GKEReason = g.checkRay(topo), g.checkGKE(topo)
	sl.RayValid, sl.GKEValid = sl.RayReason == "", sl.GKEReason == ""
	if e := topologyError(g, topo, s.Topology, target, sl, f.Topology); e != nil {
		errs = append(errs, e)
	}
	hostErrs := s.checkHostFields(g, f)
	errs = append(errs, hostErrs...)
	if len(hostErrs) == 0 {
		sl.ChipsPerHost = g.DefaultChipsPerHost(topo)
		if s.MachineType != "" {
			m, _ := g.machineType(s.MachineType)
			sl.ChipsPerHost, sl.MachineType = m.Chips, m.Name
		} else if s.ChipsPerHost > 0 {
			sl.ChipsPerHost = s.ChipsPerHost
		}
		if sl.MachineType == "" {
			sl.MachineType = g.MachineTypeFor(sl.ChipsPerHost)
		}
		if e := checkHostSplit(sl, s, f); e != nil {
			errs = append(errs, e)
		} else if sl.MultiHost() && sl.ChipsPerHost != 4 && sl.GKEValid {
			sl.GKEValid = false
			sl.GKEReason = fmt.Sprintf("GKE builds multi-host %s slices from 4-chip hosts, not %d-chip ones", g.Name, sl.ChipsPerHost)
			// Under TargetAny the host split decides only when Ray rejects
			// the topology: then GKE was the shape's only home.
			if target == TargetGKE || target == TargetAny && !sl.RayValid {
				errs = append(errs, field.Invalid(hostField(s, f), hostValue(s), sl.GKEReason))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return sl, nil
}

func hostField(s SliceSpec, f SliceFields) *field.Path {
	if s.MachineType != "" {
		return f.MachineType
	}
	return f.ChipsPerHost
}

func hostValue(s SliceSpec) any {
	if s.MachineType != "" {
		return s.MachineType
	}
	return s.ChipsPerHost
}

func checkHostSplit(sl *Slice, s SliceSpec, f SliceFields) *field.Error {
	chips, cph := sl.Chips(), sl.ChipsPerHost
	if chips >= cph && chips%cph == 0 {
		return nil
	}
	if s.MachineType == "" && s.ChipsPerHost == 0 {
		return nil // the default rule always divides
	}
	return field.Invalid(hostField(s, f), hostValue(s),
		fmt.Sprintf("a %s %s slice has %d chips, which %d-chip hosts cannot split evenly", sl.Generation.Name, sl.Topology, chips, cph))
}

func (s SliceSpec) checkHostFields(g *Generation, f SliceFields) field.ErrorList {
	var errs field.ErrorList
	if s.ChipsPerHost < 0 {
		errs = append(errs, field.Invalid(f.ChipsPerHost, s.ChipsPerHost, "must be positive"))
	}
	if g == nil {
		return errs
	}
	var m MachineType
	if s.MachineType != "" {
		var ok bool
		if m, ok = g.machineType(s.MachineType); !ok {
			names := make([]string, len(g.MachineTypes))
			for i, mt := range g.MachineTypes {
				names[i] = mt.Name
			}
			e := field.NotSupported(f.MachineType, s.MachineType, names)
			if len(names) == 0 {
				e.Detail = g.Name + " has no GCE machine types"
			}
			errs = append(errs, e)
		}
	}
	if s.ChipsPerHost > 0 {
		if e := g.hostSizeError(s.ChipsPerHost, f.ChipsPerHost); e != nil {
			errs = append(errs, e)
		} else if m.Name != "" && m.Chips != s.ChipsPerHost {
			errs = append(errs, field.Invalid(f.ChipsPerHost, s.ChipsPerHost,
				fmt.Sprintf("machine type %s has %d chips per host", m.Name, m.Chips)))
		}
	}
	return errs
}

// CheckChipsPerHost reports, at path p, why hosts of n chips cannot carry a
// slice of g with topology t: a host size the generation does not ship, or
// one that does not split the slice evenly. It is nil when they can. A
// front end that resolved the slice once checks a host size the user gave
// for another purpose with it (train's chipsPerHost sets each worker's TPU).
func (g *Generation) CheckChipsPerHost(t Topology, n int, p *field.Path) *field.Error {
	if n <= 0 {
		return field.Invalid(p, n, "must be positive")
	}
	if e := g.hostSizeError(n, p); e != nil {
		return e
	}
	if chips := t.Chips(); chips < n || chips%n != 0 {
		return field.Invalid(p, n, fmt.Sprintf("a %s %s slice has %d chips, which %d-chip hosts cannot split evenly", g.Name, t, chips, n))
	}
	return nil
}

func (g *Generation) hostSizeError(n int, p *field.Path) *field.Error {
	if slices.Contains(g.ChipsPerHostOptions, n) {
		return nil
	}
	opts := make([]string, len(g.ChipsPerHostOptions))
	for i, o := range g.ChipsPerHostOptions {
		opts[i] = strconv.Itoa(o)
	}
	return field.NotSupported(p, n, opts).WithDetail(g.Name + " hosts carry " + strings.Join(opts, ", ") + " chips")
}

func topologyError(g *Generation, t Topology, raw string, target Target, sl *Slice, p *field.Path) *field.Error {
	var reason, other string
	switch target {
	case TargetRay:
		if sl.RayValid {
			return nil
		}
		reason = sl.RayReason
		if sl.GKEValid {
			other = fmt.Sprintf("GKE provisions %s %s, but Ray's slice placement rejects it", g.Name, t)
		}
	case TargetGKE:
		if sl.GKEValid {
			return nil
		}
		reason = sl.GKEReason
		if sl.RayValid {
			other = fmt.Sprintf("Ray's slice placement lists %s %s, but GKE does not provision it", g.Name, t)
		}
	default:
		if sl.RayValid || sl.GKEValid {
			return nil
		}
		reason = sl.GKEReason
	}
	if t.Rank() != g.Dims {
		return field.Invalid(p, raw, reason)
	}
	valid := g.ValidTopologies(target)
	e := &field.Error{Type: field.TypeNotSupported, Field: p.String(), BadValue: raw, ValidValues: valid,
		Suggestion: suggestTopology(t, g.topologies(target), valid), Detail: reason}
	if other != "" {
		e.Detail = other
	}
	return e
}

// suggestTopology picks the "did you mean" for a shape outside valid
// (parsed and sorted by chip count: the same list as the strings in names): the same dimensions in
// another order, sorted first (v5p 16x4x4 -> 4x4x16, v6e 4x2 -> 2x4); else
// the most compact valid shape with as many chips (v6e 2x8 on GKE -> 4x4);
// else the nearest spelling (4x5 -> 4x4).
func suggestTopology(t Topology, valid []Topology, names []string) string {
	sorted := t
	slices.Sort(sorted.dims[:sorted.n])
	var perm, same Topology
	// valid is sorted by chip count: visit only the shapes with t's.
	chips := t.Chips()
	from, _ := slices.BinarySearchFunc(valid, chips, func(v Topology, c int) int { return cmp.Compare(v.Chips(), c) })
	for _, v := range valid[from:] {
		if v.Chips() != chips {
			break
		}
		if v.n != t.n {
			continue
		}
		if v == sorted {
			return v.String()
		}
		vs := v
		slices.Sort(vs.dims[:vs.n])
		switch {
		case vs == sorted:
			if perm.IsZero() {
				perm = v
			}
		case same.IsZero() || moreCompact(v, same):
			same = v
		}
	}
	switch {
	case !perm.IsZero():
		return perm.String()
	case !same.IsZero():
		return same.String()
	}
	return field.Nearest(t.String(), names)
}
