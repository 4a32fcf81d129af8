package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// A Snapshot is what a diagnosis reads of a cluster besides the bundles
// themselves: the TPU slices, by name. The simulator answers from its
// model before anything runs; the Ray backend from the nodes the State API
// lists. Both feed the same diagnosis ([Land], [DiagnoseSliceLandings],
// [Unplaced]), so they report a placement in the same codes and words.
type Snapshot interface {
	// Slice describes the slice of that name; ok is false for a name the
	// cluster has no slice of.
	Slice(name string) (SliceInfo, bool)
}

// SliceInfo is one TPU slice of a cluster.
type SliceInfo struct {
	// Name is the slice's name (its TPU_NAME), PodType its pod type
	// ("v4-16").
	Name, PodType string
	// Hosts is how many hosts the slice has, alive or not.
	Hosts int
	// Order ranks the slice in the cluster: landings list slices in this
	// order.
	Order int
}

// SliceHostsOf is how many hosts a slice of podType has by the catalog
// (at the generation's default chips per host), or 0 when the pod type
// does not say. A snapshot read from a live cluster counts a slice's hosts
// this way, so that a slice that lost a host is still known as partial.
func SliceHostsOf(podType string) int {
	gen, chips, err := tpu.ParsePodType(podType)
	if err != nil {
		return 0
	}
	t, ok := gen.TopologyForChips(chips)
	if !ok {
		return 0
	}
	if per := gen.DefaultChipsPerHost(t); per > 0 {
		return max(1, chips/per)
	}
	return 0
}

// A LandedBundle is one placed bundle of a request, as a diagnosis reads
// it: the host it landed on, that host's slice ("" for a host of no
// slice) and the TPU it holds there.
type LandedBundle struct {
	Node, Slice string
	TPU         float64
}

// Land sums where a request's TPU bundles landed: bundles holding no TPU
// are left out, slices are listed in the snapshot's order, and when the
// bundles landed on a slice the landing says its pod type, generation and
// number of hosts.
func Land(s Snapshot, bundles []LandedBundle) RawLanding {
	var l RawLanding
	hosts := map[string]bool{}
	shares := map[string]*SliceShare{}
	sliceHosts := map[string]map[string]bool{}
	order := map[string]int{}
	for _, b := range bundles {
		if b.TPU <= 0 {
			continue
		}
		l.Bundles++
		l.TPU += b.TPU
		hosts[b.Node] = true
		info, ok := s.Slice(b.Slice)
		if b.Slice == "" || !ok {
			continue
		}
		if shares[b.Slice] == nil {
			shares[b.Slice] = &SliceShare{Slice: b.Slice, PodType: info.PodType, SliceHosts: info.Hosts}
			sliceHosts[b.Slice] = map[string]bool{}
			order[b.Slice] = info.Order
		}
		shares[b.Slice].TPU += b.TPU
		sliceHosts[b.Slice][b.Node] = true
	}
	l.Hosts = len(hosts)
	for _, sh := range shares {
		sh.Hosts = len(sliceHosts[sh.Slice])
		l.Shares = append(l.Shares, *sh)
	}
	slices.SortFunc(l.Shares, func(a, b SliceShare) int {
		return cmp.Or(cmp.Compare(order[a.Slice], order[b.Slice]), cmp.Compare(a.Slice, b.Slice))
	})
	if len(l.Shares) > 0 {
		first := l.Shares[0]
		l.SliceHosts, l.PodType = first.SliceHosts, first.PodType
		if gen, _, err := tpu.ParsePodType(first.PodType); err == nil {
			l.Generation = gen
		}
	}
	return l
}

// DiagnoseSliceLandings reports where the slices of a slice group landed,
// given the landing of each requested slice (landings[i] for slice i):
// SpansSlices when a multi-host slice's bundles landed on several
// physical slices, SharedSlice when two requested slices landed on one,
// WrongPodType when one landed on a slice of another pod type,
// PartialSlice when a multi-host slice holds only some hosts of its slice,
// and SpansHosts when a single-host slice's bundles landed on several
// hosts. A nil group has nothing to diagnose: the Diagnosis is empty.
func DiagnoseSliceLandings(g *SliceGroup, landings []RawLanding) Diagnosis {
	if g == nil {
		return nil
	}
	var d Diagnosis
	shape := fmt.Sprintf("%s %s (%s)", g.Generation, g.Topology, g.PodType)
	owner := map[string]int{}
	for si, l := range landings {
		if l.Bundles == 0 {
			continue
		}
		if len(l.Shares) > 1 && g.MultiHost {
			d = append(d, Finding{Severity: SeverityError, Code: CodeSpansSlices, Message: fmt.Sprintf(
				"slice %d of the %s request: its %s landed on %d slices (%s): %s",
				si, shape, Plural(l.Bundles, "TPU bundle"), len(l.Shares), describeShares(l.Shares), noICI)})
		}
		for _, s := range l.Shares {
			if prev, ok := owner[s.Slice]; ok && prev != si && g.MultiHost {
				d = append(d, Finding{Severity: SeverityError, Code: CodeSharedSlice, Message: fmt.Sprintf(
					"slices %d and %d of the %s request both landed on %s: they were meant to be separate slices", prev, si, shape, s.Slice)})
			}
			owner[s.Slice] = si
			if s.PodType != g.PodType {
				msg := fmt.Sprintf("slice %d of the %s request landed on %s, a %s slice", si, shape, s.Slice, s.PodType)
				if g.MultiHost {
					msg += ": the selector named a slice of another shape"
				} else {
					msg += fmt.Sprintf(": Ray pins nothing for a single-host slice; add the bundle label selector {%s: %s}", rayvocab.LabelTPUPodType, g.PodType)
				}
				d = append(d, Finding{Severity: SeverityError, Code: CodeWrongPodType, Message: msg})
			} else if g.MultiHost && s.Hosts < s.SliceHosts {
				d = append(d, Finding{Severity: SeverityError, Code: CodePartialSlice, Message: fmt.Sprintf(
					"slice %d of the %s request holds %d of the %d hosts of %s: %s",
					si, shape, s.Hosts, s.SliceHosts, s.Slice, partialWhy)})
			}
		}
		if !g.MultiHost && l.Hosts > 1 {
			d = append(d, Finding{Severity: SeverityError, Code: CodeSpansHosts, Message: fmt.Sprintf(
				"slice %d of the %s request is one host, but its %s landed on %s (%s): each is a separate TPU VM and a single-host program sees only its own; use bundles of the whole host (TPU: %d) or a STRICT_PACK strategy",
				si, shape, Plural(l.Bundles, "TPU bundle"), Plural(l.Hosts, "host"), describeShares(l.Shares), g.ChipsPerHost*max(g.TPUResourcePerChip, 1))})
		}
	}
	return d
}
