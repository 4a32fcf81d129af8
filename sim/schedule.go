package sim

import (
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// attempt is one run of a scheduling policy. Allocations are recorded in an
// overlay and applied to the cluster only on commit, as Ray's scheduler
// deducts resources while it plans and returns them afterwards. In
// capacity mode every host counts as idle: the run tells whether the group
// could ever be placed.
type attempt struct {
	c        *Cluster
	capacity bool
	touched  map[int32]*touch
	list     []*touch
	kidx     []int
}

type touch struct {
	node       int32
	alloc      []int64 // aligned with the node's class.res
	sliceAlloc int64
	excluded   bool // erased from the candidates of this run
}

func (c *Cluster) newAttempt(capacity bool) *attempt {
	return &attempt{c: c, capacity: capacity, touched: map[int32]*touch{}}
}

// free returns node ni's free amount of class resource k under the overlay.
func (a *attempt) free(ni int32, k int) int64 {
	n := &a.c.nodes[ni]
	v := n.avail[k]
	if a.capacity {
		v = n.class.total[k]
	}
	if t := a.touched[ni]; t != nil {
		v -= t.alloc[k]
	}
	return v
}

func (a *attempt) sliceFree(ni int32) int64 {
	n := &a.c.nodes[ni]
	v := n.sliceAvail
	if a.capacity {
		v = unit
	}
	if t := a.touched[ni]; t != nil {
		v -= t.sliceAlloc
	}
	return v
}

// score is Ray's LeastResourceScorer for node ni: the sum over requested
// resources of (free - requested) / free, or -1 when the node cannot hold
// the request (resources or labels).
func (a *attempt) score(ni int32, r *request) float64 {
	if r.unknown {
		return -1
	}
	n := &a.c.nodes[ni]
	for i := range r.sel {
		cn := &r.sel[i]
		v, ok := a.c.labelOf(ni, cn.Key)
		if !cn.Matches(v, ok) {
			return -1
		}
	}
	s := 0.0
	for _, x := range r.res {
		k := n.class.index(x.id)
		if k < 0 {
			return -1
		}
		s = addScore(s, a.free(ni, k), x.amt)
		if s < 0 {
			return -1
		}
	}
	for _, x := range r.slices {
		if n.slice != x.slice {
			return -1
		}
		s = addScore(s, a.sliceFree(ni), x.amt)
		if s < 0 {
			return -1
		}
	}
	return s
}

// addScore adds one resource's term to a score, or returns -1 when free
// is short of req.
func addScore(s float64, free, req int64) float64 {
	if free < req {
		return -1
	}
	if free == 0 {
		return s
	}
	return s + float64(free-req)/float64(free)
}

// best is Ray's GetBestNode: the candidate with the highest score, ties
// going to the first host in cluster order. Candidates are the hosts not
// erased in this run; with onlyErased, the erased ones (SPREAD's second
// pass over the nodes it already chose).
func (a *attempt) best(r *request, onlyErased bool) int32 {
	if r.unknown {
		return -1
	}
	bestN, bestS := int32(-1), -1.0
	consider := func(ni int32, s float64) {
		if s < 0 {
			return
		}
		if bestN < 0 || s > bestS || s == bestS && ni < bestN {
			bestN, bestS = ni, s
		}
	}
	if a.c.scan && !onlyErased {
		for ni := range int32(len(a.c.nodes)) {
			if t := a.touched[ni]; t != nil && t.excluded {
				continue
			}
			consider(ni, a.score(ni, r))
		}
		return bestN
	}
	if onlyErased {
		for _, t := range a.list {
			if t.excluded {
				consider(t.node, a.score(t.node, r))
			}
		}
		return bestN
	}
	if r.pinned {
		for _, si := range r.pins {
			sl := &a.c.slices[si]
			for ni := sl.first; ni < sl.first+sl.hosts; ni++ {
				if t := a.touched[ni]; t != nil && t.excluded {
					continue
				}
				consider(ni, a.score(ni, r))
			}
		}
		return bestN
	}
	for _, cl := range a.c.candidateClasses(r) {
		if !a.classFits(cl, r) {
			continue
		}
		if a.capacity {
			s := a.stateScore(cl.total, r)
			if s < 0 || bestN >= 0 && s < bestS {
				continue
			}
			for _, ni := range cl.members {
				if a.touched[ni] == nil && a.c.sliceLabelOK(ni, r.sel) {
					consider(ni, s)
					break
				}
			}
			continue
		}
		for _, st := range cl.states {
			s := a.stateScore(st.avail, r)
			if s < 0 || bestN >= 0 && s < bestS {
				continue
			}
			for p := st.set.next(0); p >= 0; p = st.set.next(p + 1) {
				ni := cl.members[p]
				if a.touched[ni] == nil && a.c.sliceLabelOK(ni, r.sel) {
					consider(ni, s)
					break
				}
			}
		}
	}
	// Hosts this run already holds something on but has not erased.
	for _, t := range a.list {
		if !t.excluded {
			consider(t.node, a.score(t.node, r))
		}
	}
	return bestN
}

// classFits checks a class's labels (all but the slice name) against the
// selector and records where the requested resources sit in it.
func (a *attempt) classFits(cl *class, r *request) bool {
	for i := range r.sel {
		cn := &r.sel[i]
		if cn.Key == rayvocab.LabelTPUSliceName {
			continue
		}
		v, ok := cl.labels[cn.Key]
		if !cn.Matches(v, ok) {
			return false
		}
	}
	a.kidx = a.kidx[:0]
	for _, x := range r.res {
		k := cl.index(x.id)
		if k < 0 || cl.total[k] < x.amt {
			return false
		}
		a.kidx = append(a.kidx, k)
	}
	return true
}

// stateScore scores free resources avail (aligned with the class found by
// the last classFits) for r.
func (a *attempt) stateScore(avail []int64, r *request) float64 {
	s := 0.0
	for i, x := range r.res {
		s = addScore(s, avail[a.kidx[i]], x.amt)
		if s < 0 {
			return -1
		}
	}
	return s
}

// sliceLabelOK checks node ni's slice name against the selector's
// conditions on it (the per-host part of a class match).
func (c *Cluster) sliceLabelOK(ni int32, sel placement.LabelSelector) bool {
	for i := range sel {
		cn := &sel[i]
		if cn.Key != rayvocab.LabelTPUSliceName {
			continue
		}
		v, ok := c.labelOf(ni, cn.Key)
		if !cn.Matches(v, ok) {
			return false
		}
	}
	return true
}

// candidateClasses returns the shortest class list an index offers for r:
// the classes holding one of its resources or one of its label values.
func (c *Cluster) candidateClasses(r *request) []*class {
	var best []*class
	found := false
	offer := func(list []*class) {
		if !found || len(list) < len(best) {
			best, found = list, true
		}
	}
	for _, x := range r.res {
		offer(c.byRes[x.id])
	}
	for i := range r.sel {
		cn := &r.sel[i]
		if cn.Key == rayvocab.LabelTPUSliceName || cn.Negated || len(cn.Values) != 1 {
			continue
		}
		offer(c.byLabel[cn.Key+"\x00"+cn.Values[0]])
	}
	if !found {
		return c.classes
	}
	return best
}

// alloc records r on node ni.
func (a *attempt) alloc(ni int32, r *request) {
	t := a.touched[ni]
	if t == nil {
		n := &a.c.nodes[ni]
		t = &touch{node: ni, alloc: make([]int64, len(n.class.res))}
		a.touched[ni] = t
		a.list = append(a.list, t)
	}
	cl := a.c.nodes[ni].class
	for _, x := range r.res {
		t.alloc[cl.index(x.id)] += x.amt
	}
	for _, x := range r.slices {
		t.sliceAlloc += x.amt
	}
}

func (a *attempt) erase(ni int32) { a.touched[ni].excluded = true }

// run places reqs with strategy. It returns the node of every request, or
// the index of the request it could not place (-1 for STRICT_PACK's
// aggregate) and false.
func (a *attempt) run(strategy placement.Strategy, reqs []*request, order []int) ([]int32, int, bool) {
	out := make([]int32, len(reqs))
	switch strategy {
	case placement.StrictPack:
		agg := a.c.aggregate(reqs)
		ni := a.best(agg, false)
		if ni < 0 {
			return nil, -1, false
		}
		for i, r := range reqs {
			a.alloc(ni, r)
			out[i] = ni
		}
	case placement.StrictSpread:
		for _, i := range order {
			ni := a.best(reqs[i], false)
			if ni < 0 {
				return nil, i, false
			}
			a.alloc(ni, reqs[i])
			a.erase(ni)
			out[i] = ni
		}
	case placement.Spread:
		for _, i := range order {
			ni := a.best(reqs[i], false)
			if ni >= 0 {
				a.alloc(ni, reqs[i])
				a.erase(ni)
			} else if ni = a.best(reqs[i], true); ni >= 0 {
				a.alloc(ni, reqs[i])
			} else {
				return nil, i, false
			}
			out[i] = ni
		}
	default: // PACK
		remaining := slices.Clone(order)
		for len(remaining) > 0 {
			first := remaining[0]
			ni := a.best(reqs[first], false)
			if ni < 0 {
				return nil, first, false
			}
			a.alloc(ni, reqs[first])
			out[first] = ni
			rest := remaining[:0]
			for _, i := range remaining[1:] {
				if a.score(ni, reqs[i]) >= 0 {
					a.alloc(ni, reqs[i])
					out[i] = ni
				} else {
					rest = append(rest, i)
				}
			}
			remaining = rest
			a.erase(ni)
		}
	}
	return out, 0, true
}

// commit applies the attempt's allocations to the cluster.
func (a *attempt) commit() {
	for _, t := range a.list {
		n := &a.c.nodes[t.node]
		for k, v := range t.alloc {
			n.avail[k] -= v
		}
		n.sliceAvail -= t.sliceAlloc
		a.c.restate(t.node)
	}
}

// release returns request r held on node ni.
func (c *Cluster) release(ni int32, r *request) {
	n := &c.nodes[ni]
	for _, x := range r.res {
		n.avail[n.class.index(x.id)] += x.amt
	}
	for _, x := range r.slices {
		n.sliceAvail += x.amt
	}
	c.restate(ni)
}
