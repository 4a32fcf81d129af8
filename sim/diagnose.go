package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

func finding(sev placement.Severity, code, msg string) placement.Finding {
	return placement.Finding{Severity: sev, Code: code, Message: msg}
}

// snapshot is the cluster as placement's diagnosis reads it.
type snapshot struct{ c *Cluster }

func (s snapshot) Slice(name string) (placement.SliceInfo, bool) {
	si, ok := s.c.sliceByName[name]
	if !ok {
		return placement.SliceInfo{}, false
	}
	info := &s.c.slices[si]
	return placement.SliceInfo{Name: info.name, PodType: info.item.item.PodType, Hosts: int(info.hosts), Order: int(info.first)}, true
}

// land sums where the created bundles among bs landed.
func (c *Cluster) land(bs []BundlePlacement) placement.RawLanding {
	landed := make([]placement.LandedBundle, 0, len(bs))
	for _, b := range bs {
		if b.State == StateCreated {
			landed = append(landed, placement.LandedBundle{Node: b.Node, Slice: b.SliceName, TPU: b.Resources[rayvocab.ResourceTPU]})
		}
	}
	return placement.Land(snapshot{c}, landed)
}

// groupFindings reports pending and infeasible groups.
func groupFindings(groups []GroupRef) placement.Diagnosis {
	var d placement.Diagnosis
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

func (c *Cluster) diagnoseSlices(sp *SlicePlacement, g *placement.SliceGroup) placement.Diagnosis {
	var d placement.Diagnosis
	if sp.Error != nil {
		d = append(d, finding(placement.SeverityError, placement.CodeHeadReservationFailed, fmt.Sprintf(
			"slice %d: %s; every placement group of the request was removed", sp.Error.Slice, sp.Error.Error())))
	}
	d = append(d, groupFindings(sp.Groups)...)
	landings := make([]placement.RawLanding, max(g.NumSlices, 1))
	for si := range landings {
		var bs []BundlePlacement
		for _, b := range sp.Bundles {
			if b.Slice == si {
				bs = append(bs, b)
			}
		}
		landings[si] = c.land(bs)
	}
	d = append(d, placement.DiagnoseSliceLandings(g, landings)...)
	d = append(d, c.busyHeads(sp)...)
	return d
}

// busyHeads flags slices whose head was reserved while other hosts of the
// slice were in use, leaving the pinned workers pending.
func (c *Cluster) busyHeads(sp *SlicePlacement) placement.Diagnosis {
	var d placement.Diagnosis
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
		d = append(d, finding(placement.SeverityWarning, placement.CodeBusySlice, msg))
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

func (c *Cluster) diagnoseRaw(sp *SlicePlacement) placement.Diagnosis {
	d := groupFindings(sp.Groups)
	return append(d, c.land(sp.Bundles).Diagnose()...)
}
