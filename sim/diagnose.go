package sim

import (
	"fmt"
	"slices"
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

// Finding codes: placement's, so every backend reports in the same words.
const (
	CodeSpansSlices           = placement.CodeSpansSlices
	CodePartialSlice          = placement.CodePartialSlice
	CodeWrongPodType          = placement.CodeWrongPodType
	CodeSpansHosts            = placement.CodeSpansHosts
	CodeSharedSlice           = placement.CodeSharedSlice
	CodeHeadReservationFailed = placement.CodeHeadReservationFailed
	CodePending               = placement.CodePending
	CodeInfeasible            = placement.CodeInfeasible
	CodeUnpinned              = placement.CodeUnpinned
	CodeBusySlice             = placement.CodeBusySlice
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

func (l *landing) shares() []placement.SliceShare {
	out := make([]placement.SliceShare, len(l.slices))
	for i, s := range l.slices {
		out[i] = placement.SliceShare{Slice: s.info.name, TPU: s.tpu, Hosts: len(s.hosts)}
	}
	return out
}

func (l *landing) describe() string { return placement.DescribeShares(l.shares()) }

const noICI = placement.NoICI

// groupFindings reports pending and infeasible groups.
func groupFindings(groups []GroupRef) Diagnosis {
	var d Diagnosis
	for _, pg := range groups {
		switch pg.State {
		case StatePending:
			d = append(d, placement.PendingFinding(placement.GroupName(pg.ID, pg.Name), pg.Reason))
		case StateInfeasible:
			d = append(d, placement.InfeasibleFinding(placement.GroupName(pg.ID, pg.Name), pg.Reason))
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

const partialWhy = placement.PartialWhy

func (c *Cluster) diagnoseRaw(sp *SlicePlacement) Diagnosis {
	d := groupFindings(sp.Groups)
	l := c.land(sp.Bundles)
	raw := placement.RawLanding{Bundles: l.bundles, TPU: l.tpu, Hosts: len(l.hosts), Shares: l.shares()}
	if len(l.slices) > 0 {
		s := l.slices[0].info
		raw.SliceHosts, raw.PodType, raw.Generation = int(s.hosts), s.item.item.PodType, s.item.gen
	}
	return append(d, raw.Diagnose()...)
}
