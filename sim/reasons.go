package sim

import (
	"github.com/raytpu/raytpu/placement"
)

// unplaced is the facts of why bundle failed of g is not placed (-1:
// STRICT_PACK could not hold the whole group on one node).
func (c *Cluster) unplaced(g *group, failed int) placement.Unplaced {
	if failed < 0 {
		return placement.Unplaced{WholeGroup: true, Resources: sumResources(g.bundles), GroupSize: len(g.reqs),
			Fits: c.countFits(c.aggregate(g.reqs)), Strategy: g.strategy}
	}
	r := g.reqs[failed]
	u := placement.Unplaced{Bundle: failed, Resources: g.bundles[failed], Selector: g.sels[failed],
		Fits: c.countFits(r), Strategy: g.strategy, GroupSize: len(g.reqs)}
	switch {
	case u.Fits > 0:
	case r.unknown:
		for _, k := range sortedKeys(g.bundles[failed]) {
			_, a := c.resIndex[k]
			_, b := c.sliceByName[k]
			if !a && !b && toFixed(g.bundles[failed][k]) != 0 {
				u.Missing = append(u.Missing, k)
			}
		}
	default:
		u.NoLabels = len(r.sel) > 0 && c.countFits(&request{sel: r.sel, pins: r.pins, pinned: r.pinned}) == 0
	}
	return u
}

func (c *Cluster) pendingReason(g *group, failed int) string {
	return c.unplaced(g, failed).PendingReason()
}

func (c *Cluster) infeasibleReason(g *group, failed int) string {
	return c.unplaced(g, failed).InfeasibleReason()
}

// countFits counts the hosts that could hold r on an idle cluster.
func (c *Cluster) countFits(r *request) int {
	if r.unknown {
		return 0
	}
	a := c.newAttempt(true)
	n := 0
	if r.pinned {
		for _, si := range r.pins {
			sl := &c.slices[si]
			for ni := sl.first; ni < sl.first+sl.hosts; ni++ {
				if a.score(ni, r) >= 0 {
					n++
				}
			}
		}
		return n
	}
	for _, cl := range c.candidateClasses(r) {
		if !a.classFits(cl, r) {
			continue
		}
		for _, ni := range cl.members {
			if c.sliceLabelOK(ni, r.sel) {
				n++
			}
		}
	}
	return n
}

func plural(n int, what string) string { return placement.Plural(n, what) }

func sumResources(bs []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, b := range bs {
		for k, v := range b {
			out[k] += v
		}
	}
	return out
}

// formatResources renders {CPU: 1, TPU: 4}, keys sorted.
func formatResources(m map[string]float64) string { return placement.FormatResources(m) }
