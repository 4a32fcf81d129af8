package sim

import (
	"math"
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// request is one bundle (or STRICT_PACK's aggregate) in the cluster's terms.
type request struct {
	res     []resAmt   // class resources, sorted by id
	slices  []sliceAmt // slice-name resources
	unknown bool       // asks for a resource no host has
	sel     placement.LabelSelector
	// pins lists the slices the request is confined to (by the slice-name
	// label or resource); nil when it is not pinned.
	pins   []int32
	pinned bool
}

type resAmt struct {
	id  resID
	amt int64
}

type sliceAmt struct {
	slice int32
	amt   int64
}

// newRequest interns a bundle's resources and parses its selector.
func (c *Cluster) newRequest(resources map[string]float64, sel map[string]string) *request {
	r := &request{sel: placement.NewLabelSelector(sel)}
	for _, name := range sortedKeys(resources) {
		amt := toFixed(resources[name])
		if amt == 0 {
			continue
		}
		if si, ok := c.sliceByName[name]; ok {
			r.slices = append(r.slices, sliceAmt{si, amt})
		} else if id, ok := c.resIndex[name]; ok {
			r.res = append(r.res, resAmt{id, amt})
		} else {
			r.unknown = true
		}
	}
	slices.SortFunc(r.res, func(a, b resAmt) int { return int(a.id) - int(b.id) })
	c.pin(r)
	return r
}

// pin derives the slices a request is confined to.
func (c *Cluster) pin(r *request) {
	var pins []int32
	restrict := func(set []int32) {
		if !r.pinned {
			pins, r.pinned = set, true
			return
		}
		pins = slices.DeleteFunc(pins, func(s int32) bool { return !slices.Contains(set, s) })
	}
	for _, s := range r.slices {
		restrict([]int32{s.slice})
	}
	for i := range r.sel {
		cn := &r.sel[i]
		if cn.Key != rayvocab.LabelTPUSliceName || cn.Negated { // only in() or v confines
			continue
		}
		var set []int32
		for _, v := range cn.Values {
			if si, ok := c.sliceByName[v]; ok && !slices.Contains(set, si) {
				set = append(set, si)
			}
		}
		slices.Sort(set)
		restrict(set)
	}
	if r.pinned && pins == nil {
		pins = []int32{}
	}
	r.pins = pins
}

// aggregate is STRICT_PACK's single request: the sum of every bundle, under
// every bundle's label selector.
func (c *Cluster) aggregate(reqs []*request) *request {
	agg := &request{}
	sums := map[resID]int64{}
	ssums := map[int32]int64{}
	for _, r := range reqs {
		for _, x := range r.res {
			sums[x.id] = satAdd(sums[x.id], x.amt)
		}
		for _, x := range r.slices {
			ssums[x.slice] = satAdd(ssums[x.slice], x.amt)
		}
		agg.unknown = agg.unknown || r.unknown
		agg.sel = append(agg.sel, r.sel...)
	}
	for id, v := range sums {
		agg.res = append(agg.res, resAmt{id, v})
	}
	slices.SortFunc(agg.res, func(a, b resAmt) int { return int(a.id) - int(b.id) })
	for s, v := range ssums {
		agg.slices = append(agg.slices, sliceAmt{s, v})
	}
	slices.SortFunc(agg.slices, func(a, b sliceAmt) int { return int(a.slice) - int(b.slice) })
	c.pin(agg)
	return agg
}

// satAdd adds two non-negative amounts, saturating instead of overflowing
// (no host holds that much anyway).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
