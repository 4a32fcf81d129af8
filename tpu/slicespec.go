package tpu

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
)

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
	g, gerr := resolveGeneration(s.Generation, f.Generation)
	if gerr != nil {
		errs = append(errs, gerr)
	}
	var topo Topology
	if strings.TrimSpace(s.Topology) == "" {
		errs = append(errs, field.Required(f.Topology, "a slice topology, AxB or AxBxC (e.g. 4x4, 2x2x2)"))
	} else if t, err := ParseTopology(s.Topology); err != nil {
		if e := podTypeTopology(f.Topology, s.Topology); e != nil {
			errs = append(errs, e) // "v5litepod-16": a pod type, with its shape
		} else if e := ChipCountTopology(f.Topology, s.Topology, s.Generation, target); e != nil {
			errs = append(errs, e) // "16": a chip count, with the shapes that have it
		} else {
			errs = append(errs, field.Invalid(f.Topology, s.Topology, err.Error()))
		}
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
	sl.Generation = g.clone() // the caller's, not the catalog's
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
	if g == nil {
		return field.Invalid(p, n, nilGeneration)
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
