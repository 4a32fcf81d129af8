package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// Severity, Finding and Diagnosis are placement's: the simulator, every
// backend and every front end report a placement with the same types.
type (
	Severity  = placement.Severity
	Finding   = placement.Finding
	Diagnosis = placement.Diagnosis
)

// Severities.
const (
	SeverityError   = placement.SeverityError
	SeverityWarning = placement.SeverityWarning
	SeverityInfo    = placement.SeverityInfo
)

func finding(sev Severity, code, msg string) Finding {
	return Finding{Severity: sev, Code: code, Message: msg}
}

// Finding codes.
const (
	// CodeSpansSlices: a request's TPU bundles landed on more than one
	// slice. Slices share no ICI: the first collective hangs, a Serve
	// replica stays DEPLOYING.
	CodeSpansSlices = "SpansSlices"
	// CodePartialSlice: a multi-host request holds only some hosts of a
	// multi-host slice, whose program expects every host.
	CodePartialSlice = "PartialSlice"
	// CodeWrongPodType: a slice landed on a slice of another pod type.
	CodeWrongPodType = "WrongPodType"
	// CodeSpansHosts: a single-host slice's bundles landed on several hosts.
	CodeSpansHosts = "SpansHosts"
	// CodeSharedSlice: two requested slices landed on one physical slice.
	CodeSharedSlice = "SharedSlice"
	// CodeHeadReservationFailed: a slice head could not be reserved.
	CodeHeadReservationFailed = "HeadReservationFailed"
	// CodePending: a placement group waits for resources.
	CodePending = "Pending"
	// CodeInfeasible: a placement group can never be placed.
	CodeInfeasible = "Infeasible"
	// CodeUnpinned: a multi-host request landed on one whole slice, but
	// only by chance: nothing pinned it there.
	CodeUnpinned = "Unpinned"
	// CodeBusySlice: a head reservation took a slice whose other hosts are
	// in use, so the worker bundles pinned to it wait; Ray's
	// reserve_tpu_slice does not look for an idle slice.
	CodeBusySlice = "BusySlice"
)

// landing sums where a set of bundles landed, slice by slice.
type landing struct {
	bundles int
	tpu     float64
	slices  []*landed // in cluster order
	hosts   map[string]bool
}

type landed struct {
	info  *sliceInfo
	tpu   float64
	hosts map[string]bool
}

func (c *Cluster) land(bs []BundlePlacement) *landing {
	l := &landing{hosts: map[string]bool{}}
	for _, b := range bs {
		t := b.Resources[rayvocab.ResourceTPU]
		if b.State != StateCreated || t <= 0 {
			continue
		}
		l.bundles++
		l.tpu += t
		l.hosts[b.Node] = true
		si, ok := c.sliceByName[b.SliceName]
		if !ok {
			continue
		}
		info := &c.slices[si]
		i := slices.IndexFunc(l.slices, func(x *landed) bool { return x.info == info })
		if i < 0 {
			l.slices = append(l.slices, &landed{info: info, hosts: map[string]bool{}})
			slices.SortFunc(l.slices, func(a, b *landed) int { return int(a.info.first - b.info.first) })
			i = slices.IndexFunc(l.slices, func(x *landed) bool { return x.info == info })
		}
		l.slices[i].tpu += t
		l.slices[i].hosts[b.Node] = true
	}
	return l
}

func (l *landing) describe() string {
	parts := make([]string, len(l.slices))
	for i, s := range l.slices {
		parts[i] = fmt.Sprintf("%s: %s TPU on %s", s.info.name, fmtNum(s.tpu), plural(len(s.hosts), "host"))
	}
	return strings.Join(parts, ", ")
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

const noICI = "slices share no ICI, so the first collective across them hangs (a Serve replica stays DEPLOYING)"

// groupFindings reports pending and infeasible groups.
func groupFindings(groups []GroupRef) Diagnosis {
	var d Diagnosis
	for _, pg := range groups {
		name := "placement group " + pg.ID
		if pg.Name != "" {
			name += " (" + pg.Name + ")"
		}
		switch pg.State {
		case StatePending:
			d = append(d, finding(SeverityWarning, CodePending, fmt.Sprintf(
				"%s is PENDING: %s; Ray leaves it waiting and its ready() does not resolve until resources are freed", name, pg.Reason)))
		case StateInfeasible:
			d = append(d, finding(SeverityError, CodeInfeasible, fmt.Sprintf(
				"%s is INFEASIBLE: %s; no node of this cluster can ever hold it", name, pg.Reason)))
		}
	}
	return d
}

func (c *Cluster) diagnoseSlices(sp *SlicePlacement, g *placement.SliceGroup) Diagnosis {
	var d Diagnosis
	if sp.Error != nil {
		d = append(d, finding(SeverityError, CodeHeadReservationFailed, fmt.Sprintf(
			"slice %d: %s; every placement group of the request was removed", sp.Error.Slice, sp.Error.Error())))
	}
	d = append(d, groupFindings(sp.Groups)...)
	shape := fmt.Sprintf("%s %s (%s)", g.Generation, g.Topology, g.PodType)
	owner := map[*sliceInfo]int{}
	for si := range max(g.NumSlices, 1) {
		var bs []BundlePlacement
		for _, b := range sp.Bundles {
			if b.Slice == si {
				bs = append(bs, b)
			}
		}
		l := c.land(bs)
		if l.bundles == 0 {
			continue
		}
		if len(l.slices) > 1 && g.MultiHost {
			d = append(d, finding(SeverityError, CodeSpansSlices, fmt.Sprintf(
				"slice %d of the %s request: its %s landed on %d slices (%s): %s",
				si, shape, plural(l.bundles, "TPU bundle"), len(l.slices), l.describe(), noICI)))
		}
		for _, s := range l.slices {
			if prev, ok := owner[s.info]; ok && prev != si && g.MultiHost {
				d = append(d, finding(SeverityError, CodeSharedSlice, fmt.Sprintf(
					"slices %d and %d of the %s request both landed on %s: they were meant to be separate slices", prev, si, shape, s.info.name)))
			}
			owner[s.info] = si
			if pt := s.info.item.item.PodType; pt != g.PodType {
				msg := fmt.Sprintf("slice %d of the %s request landed on %s, a %s slice", si, shape, s.info.name, pt)
				if g.MultiHost {
					msg += ": the selector named a slice of another shape"
				} else {
					msg += fmt.Sprintf(": Ray pins nothing for a single-host slice; add the bundle label selector {%s: %s}", rayvocab.LabelTPUPodType, g.PodType)
				}
				d = append(d, finding(SeverityError, CodeWrongPodType, msg))
			} else if g.MultiHost && len(s.hosts) < int(s.info.hosts) {
				d = append(d, finding(SeverityError, CodePartialSlice, fmt.Sprintf(
					"slice %d of the %s request holds %d of the %d hosts of %s: %s",
					si, shape, len(s.hosts), s.info.hosts, s.info.name, partialWhy)))
			}
		}
		if !g.MultiHost && len(l.hosts) > 1 {
			d = append(d, finding(SeverityError, CodeSpansHosts, fmt.Sprintf(
				"slice %d of the %s request is one host, but its %s landed on %s (%s): each is a separate TPU VM and a single-host program sees only its own; use bundles of the whole host (TPU: %d) or a STRICT_PACK strategy",
				si, shape, plural(l.bundles, "TPU bundle"), plural(len(l.hosts), "host"), l.describe(), g.ChipsPerHost*max(g.TPUResourcePerChip, 1))))
		}
	}
	d = append(d, c.busyHeads(sp)...)
	return d
}

// busyHeads flags slices whose head was reserved while other hosts of the
// slice were in use, leaving the pinned workers pending.
func (c *Cluster) busyHeads(sp *SlicePlacement) Diagnosis {
	var d Diagnosis
	for _, h := range sp.Heads {
		if h.State != StateCreated {
			continue
		}
		waiting := slices.ContainsFunc(sp.Bundles, func(b BundlePlacement) bool { return b.Slice == h.Slice && b.State == StatePending })
		si, ok := c.sliceByName[h.SliceName]
		if !waiting || !ok {
			continue
		}
		info := &c.slices[si]
		busy := 0
		for ni := info.first; ni < info.first+info.hosts; ni++ {
			if !c.idle(ni, true) {
				busy++
			}
		}
		if busy == 0 {
			continue
		}
		idle := 0
		for i := range c.slices {
			o := &c.slices[i]
			if o.item.item.PodType != info.item.item.PodType || o == info {
				continue
			}
			all := true
			for ni := o.first; ni < o.first+o.hosts && all; ni++ {
				all = c.idle(ni, false)
			}
			if all {
				idle++
			}
		}
		pt := info.item.item.PodType
		msg := fmt.Sprintf("slice %d: the head reservation took %s, where %s %s in use, so its workers wait", h.Slice, h.SliceName, plural(busy, "host"), isAre(busy))
		if idle > 0 {
			msg += fmt.Sprintf("; %s %s idle, but Ray's reserve_tpu_slice takes the first free head without looking at the slice's other hosts", plural(idle, "other "+pt+" slice"), isAre(idle))
		}
		d = append(d, finding(SeverityWarning, CodeBusySlice, msg))
	}
	return d
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// idle reports whether node ni holds nothing; with exceptHead, the head
// resource of worker 0 does not count (the slice's own reservation holds it).
func (c *Cluster) idle(ni int32, exceptHead bool) bool {
	n := &c.nodes[ni]
	for k, v := range n.avail {
		if v != n.class.total[k] && !(exceptHead && strings.HasSuffix(c.resNames[n.class.res[k]], rayvocab.HeadResourceSuffix)) {
			return false
		}
	}
	return n.sliceAvail == unit
}

const partialWhy = "a multi-host slice runs one program over all of its hosts, so the job waits for hosts it does not hold"

func (c *Cluster) diagnoseRaw(sp *SlicePlacement) Diagnosis {
	d := groupFindings(sp.Groups)
	l := c.land(sp.Bundles)
	if len(l.hosts) < 2 {
		return d
	}
	what := fmt.Sprintf("%s holding %s TPU", plural(l.bundles, "bundle"), fmtNum(l.tpu))
	hint := c.topologyHint(l)
	switch {
	case len(l.slices) > 1:
		d = append(d, finding(SeverityError, CodeSpansSlices, fmt.Sprintf(
			"%s landed on %d slices (%s): %s; %s", what, len(l.slices), l.describe(), noICI, hint)))
	case len(l.slices) == 1 && len(l.hosts) < int(l.slices[0].info.hosts):
		s := l.slices[0]
		d = append(d, finding(SeverityError, CodePartialSlice, fmt.Sprintf(
			"%s landed on %d of the %d hosts of %s (%s): %s; %s", what, len(s.hosts), s.info.hosts, s.info.name, s.info.item.item.PodType, partialWhy, hint)))
	case len(l.slices) == 1:
		d = append(d, finding(SeverityInfo, CodeUnpinned, fmt.Sprintf(
			"%s landed on every host of %s, but nothing pinned them to one slice: on a busier cluster they can spread; %s", what, l.slices[0].info.name, hint)))
	}
	return d
}

// topologyHint suggests the topology that reserves one slice for the chips
// of a raw request.
func (c *Cluster) topologyHint(l *landing) string {
	if len(l.slices) > 0 {
		gen := l.slices[0].info.item.gen
		if chips := int(l.tpu); float64(chips) == l.tpu {
			if t, ok := gen.TopologyForChips(chips); ok {
				return fmt.Sprintf("request topology %s (%s) so that Ray reserves one whole %s slice", t, gen.PodType(chips), gen.PodType(chips))
			}
		}
	}
	return "request a topology so that Ray reserves one whole slice"
}
