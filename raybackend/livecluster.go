package raybackend

import (
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayvocab"
)

// liveCluster is the cluster's alive nodes as the State API lists them.
// It is placement's snapshot of the cluster: its slices are read from the
// nodes' labels, in name order, each with the hosts the catalog gives its
// pod type (the alive ones when the pod type does not say).
type liveCluster struct {
	nodes  map[string]*ray.Node
	slices map[string]placement.SliceInfo
	list   []*ray.Node
	// held sums, by node id, the resources of the placed bundles.
	held map[string]map[string]float64
}

// Slice is placement.Snapshot's.
func (lc *liveCluster) Slice(name string) (placement.SliceInfo, bool) {
	s, ok := lc.slices[name]
	return s, ok
}

// hold records what the placed bundles of pgs hold on their nodes.
func (lc *liveCluster) hold(pgs []ray.PlacementGroupState) {
	lc.held = map[string]map[string]float64{}
	for _, pg := range pgs {
		if pg.State != ray.PlacementGroupCreated {
			continue
		}
		for _, b := range pg.Bundles {
			if b.NodeID == "" {
				continue
			}
			if lc.held[b.NodeID] == nil {
				lc.held[b.NodeID] = map[string]float64{}
			}
			for k, v := range b.Resources {
				lc.held[b.NodeID][k] += v
			}
		}
	}
}

func newLiveCluster(nodes []ray.Node) *liveCluster {
	lc := &liveCluster{nodes: map[string]*ray.Node{}, slices: map[string]placement.SliceInfo{}}
	alive := map[string]int{}
	for i := range nodes {
		n := &nodes[i]
		if n.State != "ALIVE" {
			continue
		}
		lc.nodes[n.ID] = n
		lc.list = append(lc.list, n)
		if s := n.Labels[rayvocab.LabelTPUSliceName]; s != "" {
			alive[s]++
			lc.slices[s] = placement.SliceInfo{Name: s, PodType: n.Labels[rayvocab.LabelTPUPodType]}
		}
	}
	for i, name := range slices.Sorted(maps.Keys(lc.slices)) {
		s := lc.slices[name]
		s.Order, s.Hosts = i, placement.SliceHostsOf(s.PodType)
		if s.Hosts == 0 {
			s.Hosts = alive[name]
		}
		lc.slices[name] = s
	}
	return lc
}

func (lc *liveCluster) sliceOf(pg *ray.PlacementGroupState) string {
	for _, b := range pg.Bundles {
		if n, ok := lc.nodes[b.NodeID]; ok {
			return n.Labels[rayvocab.LabelTPUSliceName]
		}
	}
	return ""
}

func (lc *liveCluster) landings(pg *ray.PlacementGroupState, group int, part placement.Part) []placement.Landing {
	out := make([]placement.Landing, 0, len(pg.Bundles))
	for i, b := range pg.Bundles {
		l := placement.Landing{Group: group, Part: part, Bundle: i, State: pg.State}
		if n, ok := lc.nodes[b.NodeID]; ok {
			l.Node, l.SliceName = n.IP, n.Labels[rayvocab.LabelTPUSliceName]
		}
		out = append(out, l)
	}
	return out
}

// rawLanding sums where a placed group's TPU bundles landed.
func (lc *liveCluster) rawLanding(pg *ray.PlacementGroupState) placement.RawLanding {
	var bs []placement.LandedBundle
	for _, b := range pg.Bundles {
		if n, ok := lc.nodes[b.NodeID]; ok {
			bs = append(bs, placement.LandedBundle{Node: n.ID, Slice: n.Labels[rayvocab.LabelTPUSliceName], TPU: b.Resources[rayvocab.ResourceTPU]})
		}
	}
	return placement.Land(lc, bs)
}

// groupFinding reports a group that is not CREATED: INFEASIBLE when Ray
// says so or no alive node could ever hold its first unplaced bundle,
// PENDING otherwise, with the reason in the simulator's words.
func (lc *liveCluster) groupFinding(pg *ray.PlacementGroupState, name string) (placement.Finding, bool) {
	if pg.State == ray.PlacementGroupCreated {
		return placement.Finding{}, false
	}
	i := slices.IndexFunc(pg.Bundles, func(b ray.PlacementBundle) bool { return b.NodeID == "" })
	if i < 0 {
		i = 0
	}
	if i >= len(pg.Bundles) {
		return placement.InfeasibleFinding(name, "its bundles are not all placed yet"), true
	}
	b := pg.Bundles[i]
	u := lc.unplaced(i, b.Resources, b.LabelSelector)
	u.Strategy, u.GroupSize = placement.Strategy(pg.Strategy), len(pg.Bundles)
	if u.Fits == 0 || pg.Stats.SchedulingState == ray.PlacementGroupSchedulingInfeasible {
		return placement.InfeasibleFinding(name, u.InfeasibleReason()), true
	}
	return placement.PendingFinding(name, u.PendingReason()), true
}

// headFinding reports a slice replica that holds no head reservation
// while it is not running: no alive node offers the head (the replica's
// reservation times out and Serve retries it for ever), or every
// node that does is held.
func (lc *liveCluster) headFinding(res sliceReservation, app, dep, id string) (placement.Finding, bool) {
	head := map[string]float64{rayvocab.HeadResource(res.PodType): 1}
	sel := map[string]string{rayvocab.LabelTPUWorkerID: "0", rayvocab.LabelTPUPodType: res.PodType}
	u := lc.unplaced(0, head, sel)
	reason := u.InfeasibleReason()
	if u.Fits > 0 {
		if lc.anyFree(head, sel) { // the replica is about to reserve it
			return placement.Finding{}, false
		}
		reason = u.PendingReason()
	}
	return placement.Finding{Severity: placement.SeverityError, Code: placement.CodeHeadReservationFailed, Message: fmt.Sprintf(
		"slice 0 of the %s %s request (%s) of %s holds no head reservation: %s; the replica gives up after head_reservation_timeout_s and Serve retries it",
		res.AcceleratorVersion, res.Topology, res.PodType, res.sliceName(app, dep, id), reason)}, true
}

// unplaced gathers the facts of why a bundle is not placed: the
// resources no alive node offers, whether any carries its labels, and how
// many could hold it on an idle cluster. The live cluster reports no free
// resources per node, so a bundle some node could hold "waits for one to
// be free".
func (lc *liveCluster) unplaced(i int, res map[string]float64, sel map[string]string) placement.Unplaced {
	u := placement.Unplaced{Bundle: i, Resources: res, Selector: sel}
	for _, k := range slices.Sorted(maps.Keys(res)) {
		if res[k] > 0 && !slices.ContainsFunc(lc.list, func(n *ray.Node) bool { return n.Resources[k] > 0 }) {
			u.Missing = append(u.Missing, k)
		}
	}
	if len(u.Missing) > 0 {
		return u
	}
	labelled := 0
	ls := placement.NewLabelSelector(sel) // as accepted by Ray: parsed, not validated
	for _, n := range lc.list {
		if !ls.Matches(n.Labels) {
			continue
		}
		labelled++
		if !slices.ContainsFunc(slices.Collect(maps.Keys(res)), func(k string) bool { return n.Resources[k] < res[k] }) {
			u.Fits++
		}
	}
	u.NoLabels = labelled == 0
	return u
}

// anyFree reports whether an alive node matching sel has res free of the
// placed bundles' holds. Resources held outside placement groups (plain
// actors and tasks) are not seen.
func (lc *liveCluster) anyFree(res map[string]float64, sel map[string]string) bool {
	ls := placement.NewLabelSelector(sel)
	return slices.ContainsFunc(lc.list, func(n *ray.Node) bool {
		if !ls.Matches(n.Labels) {
			return false
		}
		for k, v := range res {
			if n.Resources[k]-lc.held[n.ID][k] < v {
				return false
			}
		}
		return true
	})
}
