package sim

import (
	"slices"
	"strings"

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
	reason := c.unplaced(g, failed).PendingReason()
	if failed >= 0 {
		reason += c.heldBy(g, g.reqs[failed], g.bundles[failed])
	}
	return reason
}

// maxHolderNodes bounds the nodes heldBy looks at, so that a bundle that
// fits thousands of hosts does not make every reason scan the fleet.
const maxHolderNodes = 4096

// maxHolders is how many holders a reason names before it counts the rest.
const maxHolders = 3

// heldBy names the placement groups that hold what bundle (request r)
// needs on the nodes that could hold it: "; held by placement group pg-1
// (head reservation of slice 0 for mnist-workers)". It is "" when no
// other group holds any of it there (the nodes are lost, or too many to
// look at).
func (c *Cluster) heldBy(g *group, r *request, bundle map[string]float64) string {
	nodes := map[int32]bool{}
	c.eachFit(r, func(ni int32) bool {
		nodes[ni] = true
		return len(nodes) <= maxHolderNodes
	})
	if len(nodes) == 0 || len(nodes) > maxHolderNodes {
		return ""
	}
	var holders []*group
	for _, h := range c.groups {
		if h == g || h.state != StateCreated {
			continue
		}
		for i, ni := range h.nodes {
			if nodes[ni] && overlaps(h.bundles[i], bundle) {
				holders = append(holders, h)
				break
			}
		}
	}
	if len(holders) == 0 {
		return ""
	}
	slices.SortFunc(holders, func(a, b *group) int { return a.seq - b.seq })
	names := make([]string, 0, min(len(holders), maxHolders)+1)
	for _, h := range holders[:min(len(holders), maxHolders)] {
		name := h.name
		if name == "" {
			name = h.owner
		}
		names = append(names, placement.GroupName(h.id, name))
	}
	if n := len(holders) - maxHolders; n > 0 {
		names = append(names, plural(n, "more group"))
	}
	return "; held by " + strings.Join(names, ", ")
}

// overlaps reports whether two bundles ask for a resource in common.
func overlaps(a, b map[string]float64) bool {
	for k, v := range a {
		if v > 0 && b[k] > 0 {
			return true
		}
	}
	return false
}

func (c *Cluster) infeasibleReason(g *group, failed int) string {
	return c.unplaced(g, failed).InfeasibleReason()
}

// countFits counts the hosts that could hold r on an idle cluster.
func (c *Cluster) countFits(r *request) int {
	n := 0
	c.eachFit(r, func(int32) bool { n++; return true })
	return n
}

// eachFit calls fn with every host that could hold r on an idle cluster,
// in host order within each class, until fn returns false.
func (c *Cluster) eachFit(r *request, fn func(ni int32) bool) {
	if r.unknown {
		return
	}
	a := c.newAttempt(true)
	if r.pinned {
		for _, si := range r.pins {
			sl := &c.slices[si]
			for ni := sl.first; ni < sl.first+sl.hosts; ni++ {
				if a.score(ni, r) >= 0 && !fn(ni) {
					return
				}
			}
		}
		return
	}
	for _, cl := range c.candidateClasses(r) {
		if !a.classFits(cl, r) {
			continue
		}
		for _, ni := range cl.members {
			if c.sliceLabelOK(ni, r.sel) && !fn(ni) {
				return
			}
		}
	}
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
