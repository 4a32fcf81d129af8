package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// resolved is a validated item with every default filled in.
type resolved struct {
	item         Item // PodType in Ray's form; Topology, ChipsPerHost, CPU, Memory set
	gen          *tpu.Generation
	topo         tpu.Topology
	chips        int
	hostsPerItem int // hosts per slice (1 for CPU nodes)
}

// itemFields are the paths an item's errors are reported under.
type itemFields struct {
	root                                                *field.Path
	count, podType, topology, chipsPerHost, cpu, memory *field.Path
	minSlices, maxSlices                                *field.Path
}

func fieldsOf(p *field.Path) itemFields {
	return itemFields{p, p.Child("count"), p.Child("podType"), p.Child("topology"), p.Child("chipsPerHost"), p.Child("cpu"), p.Child("memory"),
		p.Child("minSlices"), p.Child("maxSlices")}
}

// checkAutoscaledItem checks an autoscaled item's bounds: KubeRay's
// 0 <= minReplicas <= replicas <= maxReplicas, on TPU slices only.
func checkAutoscaledItem(it Item, f itemFields) field.ErrorList {
	var errs field.ErrorList
	if it.IsCPU() {
		return field.ErrorList{field.Forbidden(f.maxSlices, "CPU-only nodes are not simulated as autoscaled; autoscale a TPU worker group")}
	}
	if it.MaxSlices > MaxHosts {
		errs = append(errs, field.Invalid(f.maxSlices, it.MaxSlices, fmt.Sprintf("at most %d", MaxHosts)))
	}
	switch {
	case it.MinSlices < 0:
		errs = append(errs, field.Invalid(f.minSlices, it.MinSlices, "0 or more slices"))
	case it.MinSlices > it.MaxSlices:
		errs = append(errs, field.Invalid(f.minSlices, it.MinSlices, fmt.Sprintf("must not exceed maxSlices (%d)", it.MaxSlices)))
	case it.Count != 0 && (it.Count < it.MinSlices || it.Count > it.MaxSlices):
		errs = append(errs, field.Invalid(f.count, it.Count, fmt.Sprintf("the slices the group has now: from minSlices %d to maxSlices %d", it.MinSlices, it.MaxSlices)))
	case it.Count < 0:
		errs = append(errs, field.Invalid(f.count, it.Count, "0 or more slices"))
	}
	return errs
}

// resolveItem validates it and fills in its defaults.
func resolveItem(it Item, f itemFields) (resolved, field.ErrorList) {
	var errs field.ErrorList
	r := resolved{item: it, hostsPerItem: 1}
	switch {
	case it.Autoscaled():
		errs = append(errs, checkAutoscaledItem(it, f)...)
		if it.Count == 0 {
			r.item.Count = it.MinSlices
		}
	case it.MinSlices != 0:
		errs = append(errs, field.Required(f.maxSlices, fmt.Sprintf("minSlices %d makes an autoscaled group only with maxSlices, the most slices it may grow to", it.MinSlices)))
	case it.Count < 0:
		errs = append(errs, field.Invalid(f.count, it.Count, "must be at least 1"))
	}
	if r.item.Count == 0 && !it.Autoscaled() {
		r.item.Count = 1
	}
	if it.CPU < 0 || it.CPU > maxHostCPU {
		errs = append(errs, field.Invalid(f.cpu, it.CPU, fmt.Sprintf("must be a positive number of CPUs, at most %d", maxHostCPU)))
	}
	if r.item.CPU == 0 {
		r.item.CPU = DefaultCPU
	}
	if it.Memory < 0 || it.Memory > maxHostMemory {
		errs = append(errs, field.Invalid(f.memory, it.Memory.String(), "must be a positive size up to "+maxHostMemory.String()+", e.g. 64Gi"))
	}
	if r.item.Memory == 0 {
		r.item.Memory = DefaultMemory
	}
	pod := strings.TrimSpace(it.PodType)
	switch {
	case pod == "":
		errs = append(errs, field.Required(f.podType, "a pod type such as v6e-16, v4-16 or tpu7x-8, or \"cpu\" for CPU-only nodes"))
		return r, errs
	case strings.EqualFold(pod, CPUPodType):
		r.item.PodType = CPUPodType
		if it.Topology != "" {
			errs = append(errs, field.Forbidden(f.topology, "CPU-only nodes have no topology"))
		}
		if it.ChipsPerHost != 0 {
			errs = append(errs, field.Forbidden(f.chipsPerHost, "CPU-only nodes have no TPU chips"))
		}
		return r, errs
	}
	gen, chips, perr := parsePodType(pod, f.podType)
	if perr != nil {
		return r, append(errs, perr)
	}
	topo := strings.TrimSpace(it.Topology)
	if topo == "" {
		t, _ := gen.TopologyForChips(chips)
		topo = t.String()
	} else if t, err := tpu.ParseTopology(topo); err != nil {
		errs = append(errs, field.Invalid(f.topology, it.Topology, err.Error()))
		return r, errs
	} else if t.Chips() != chips {
		valid := topologiesWithChips(gen, chips)
		e := field.NotSupported(f.topology, it.Topology, valid)
		if def, ok := gen.TopologyForChips(chips); ok {
			e.Suggest([]string{def.String()})
		}
		e.Detail = fmt.Sprintf("%s has %d chips, %s has %d", gen.PodType(chips), chips, t, t.Chips())
		errs = append(errs, e)
		return r, errs
	} else {
		topo = t.String()
	}
	sl, serrs := tpu.SliceSpec{Generation: gen.Name, Topology: topo, ChipsPerHost: it.ChipsPerHost}.
		Resolve(tpu.TargetAny, tpu.SliceFields{Generation: f.podType, Topology: f.topology, ChipsPerHost: f.chipsPerHost, MachineType: f.root.Child("machineType")})
	if len(serrs) > 0 {
		return r, append(errs, serrs...)
	}
	r.gen, r.topo, r.chips = gen, sl.Topology, chips
	r.item.PodType = gen.PodType(chips)
	r.item.Topology = sl.Topology.String()
	r.item.ChipsPerHost = sl.ChipsPerHost
	r.hostsPerItem = sl.Hosts()
	return r, errs
}

// parsePodType is tpu.ParsePodType with field errors that list valid values.
func parsePodType(s string, p *field.Path) (*tpu.Generation, int, *field.Error) {
	name, _, _ := strings.Cut(s, "-")
	gen, ok := tpu.LookupGeneration(name)
	if !ok {
		valid := append([]string{CPUPodType}, rayVersions()...)
		e := field.NotSupported(p, s, valid)
		e.Detail = fmt.Sprintf("unknown TPU generation %q: want <generation>-<size>, e.g. v6e-16, v4-16, tpu7x-8", name)
		if n := field.Nearest(name, valid); n != "" && n != CPUPodType {
			_, size, _ := strings.Cut(s, "-")
			e.Suggest([]string{n + "-" + size})
		} else {
			e.Suggest(nil)
		}
		return nil, 0, e
	}
	g, chips, err := tpu.ParsePodType(s)
	if err == nil {
		if _, ok := gen.TopologyForChips(chips); ok {
			return g, chips, nil
		}
	}
	valid := podTypesOf(gen)
	e := field.NotSupported(p, s, valid)
	e.Suggest([]string{nearestPodType(chips, valid)})
	if err != nil {
		e.Detail = err.Error()
	} else {
		e.Detail = fmt.Sprintf("no %s slice has %d chips", gen.Name, chips)
	}
	return nil, 0, e
}

func rayVersions() []string {
	var out []string
	for _, g := range tpu.Generations() {
		out = append(out, g.RayVersion)
		if g.GCEPrefix != g.RayVersion {
			out = append(out, g.GCEPrefix)
		}
	}
	return out
}

// podTypesOf lists the pod types of every valid slice of g, smallest first.
func podTypesOf(g *tpu.Generation) []string {
	var chips []int
	for _, s := range g.ValidTopologies(tpu.TargetAny) {
		chips = append(chips, tpu.MustParseTopology(s).Chips())
	}
	slices.Sort(chips)
	chips = slices.Compact(chips)
	out := make([]string, len(chips))
	for i, c := range chips {
		out[i] = g.PodType(c)
	}
	return out
}

// nearestPodType suggests the smallest valid pod type with at least the
// requested chips (the largest when none is that big).
func nearestPodType(chips int, valid []string) string {
	if chips <= 0 || len(valid) == 0 {
		return ""
	}
	for _, v := range valid {
		if _, c, err := tpu.ParsePodType(v); err == nil && c >= chips {
			return v
		}
	}
	return valid[len(valid)-1]
}

func topologiesWithChips(g *tpu.Generation, chips int) []string {
	var out []string
	for _, s := range g.ValidTopologies(tpu.TargetAny) {
		if tpu.MustParseTopology(s).Chips() == chips {
			out = append(out, s)
		}
	}
	return out
}
