package sim

import (
	"fmt"

	"github.com/raytpu/raytpu/placement"
)

// describe renders bundle i for a reason: "bundle 2 {CPU: 1, TPU: 4} with
// label selector {...}".
func describe(g *group, i int) string {
	return placement.DescribeBundle(i, g.bundles[i], g.sels[i])
}

func (c *Cluster) pendingReason(g *group, failed int) string {
	if failed < 0 {
		n := c.countFits(c.aggregate(g.reqs))
		return fmt.Sprintf("STRICT_PACK: none of the %d nodes that can hold all %d bundles together has them free", n, len(g.reqs))
	}
	msg := placement.NoneFreeReason(describe(g, failed), c.countFits(g.reqs[failed]))
	switch g.strategy {
	case placement.StrictSpread:
		msg += " on a node of its own (STRICT_SPREAD)"
	case placement.Pack, placement.Spread:
		if len(g.reqs) > 1 {
			msg += " beside the group's other bundles"
		}
	}
	return msg
}

func (c *Cluster) infeasibleReason(g *group, failed int) string {
	if failed < 0 {
		return fmt.Sprintf("STRICT_PACK: no node can hold all %d bundles together %s", len(g.reqs), formatResources(sumResources(g.bundles)))
	}
	r := g.reqs[failed]
	if n := c.countFits(r); n > 0 {
		if g.strategy == placement.StrictSpread {
			return fmt.Sprintf("%s: STRICT_SPREAD needs a node per bundle, and only %s can hold one", describe(g, failed), plural(n, "node"))
		}
		what := fmt.Sprintf("the %d nodes that can hold it cannot", n)
		if n == 1 {
			what = "the one node that can hold it cannot"
		}
		return fmt.Sprintf("%s: %s hold the whole group", describe(g, failed), what)
	}
	if r.unknown {
		var missing []string
		for _, k := range sortedKeys(g.bundles[failed]) {
			_, a := c.resIndex[k]
			_, b := c.sliceByName[k]
			if !a && !b && toFixed(g.bundles[failed][k]) != 0 {
				missing = append(missing, k)
			}
		}
		return placement.NoResourceReason(describe(g, failed), missing)
	}
	if len(r.sel) > 0 && c.countFits(&request{sel: r.sel, pins: r.pins, pinned: r.pinned}) == 0 {
		return placement.NoLabelsReason(describe(g, failed), g.sels[failed])
	}
	return placement.NoFitReason(describe(g, failed))
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
