package raybackend

import (
	"fmt"
	"maps"
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// liveCluster is the cluster's alive nodes as the State API lists them.
type liveCluster struct {
	nodes map[string]*ray.Node
	// hosts counts the alive hosts of each slice, by slice name.
	hosts map[string]int
	list  []*ray.Node
	// held sums, by node id, the resources of the placed bundles.
	held map[string]map[string]float64
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
	lc := &liveCluster{nodes: map[string]*ray.Node{}, hosts: map[string]int{}}
	for i := range nodes {
		n := &nodes[i]
		if n.State != "ALIVE" {
			continue
		}
		lc.nodes[n.ID] = n
		lc.list = append(lc.list, n)
		if s := n.Labels[rayvocab.LabelTPUSliceName]; s != "" {
			lc.hosts[s]++
		}
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

// rawLanding sums where a placed group's TPU bundles landed, slice by
// slice in slice-name order.
func (lc *liveCluster) rawLanding(pg *ray.PlacementGroupState) placement.RawLanding {
	var l placement.RawLanding
	hosts := map[string]bool{}
	bySlice := map[string]*placement.SliceShare{}
	sliceHosts := map[string]map[string]bool{}
	var podType string
	for _, b := range pg.Bundles {
		t := b.Resources[rayvocab.ResourceTPU]
		n, ok := lc.nodes[b.NodeID]
		if t <= 0 || !ok {
			continue
		}
		l.Bundles++
		l.TPU += t
		hosts[n.ID] = true
		s := n.Labels[rayvocab.LabelTPUSliceName]
		if s == "" {
			continue
		}
		if bySlice[s] == nil {
			bySlice[s], sliceHosts[s] = &placement.SliceShare{Slice: s}, map[string]bool{}
			podType = n.Labels[rayvocab.LabelTPUPodType]
		}
		bySlice[s].TPU += t
		sliceHosts[s][n.ID] = true
	}
	l.Hosts = len(hosts)
	for _, s := range slices.Sorted(maps.Keys(bySlice)) {
		bySlice[s].Hosts = len(sliceHosts[s])
		l.Shares = append(l.Shares, *bySlice[s])
	}
	if len(l.Shares) > 0 {
		l.SliceHosts = lc.hosts[l.Shares[0].Slice]
		l.PodType = podType
		if gen, _, err := tpu.ParsePodType(podType); err == nil {
			l.Generation = gen
		}
	}
	return l
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
	reason, fits := "its bundles are not all placed yet", 0
	if i < len(pg.Bundles) {
		b := pg.Bundles[i]
		reason, fits = lc.reason(placement.DescribeBundle(i, b.Resources, b.LabelSelector), b.Resources, b.LabelSelector)
	}
	if fits == 0 || pg.Stats.SchedulingState == ray.PlacementGroupSchedulingInfeasible {
		return placement.InfeasibleFinding(name, reason), true
	}
	return placement.PendingFinding(name, reason), true
}

// headFinding reports a slice replica that holds no head reservation
// while it is not running: no alive node offers the head (the replica
// runtime's reservation times out and Serve retries it for ever), or every
// node that does is held.
func (lc *liveCluster) headFinding(res reservation, app, dep, id string) (placement.Finding, bool) {
	head := map[string]float64{rayvocab.HeadResource(res.PodType): 1}
	sel := map[string]string{rayvocab.LabelTPUWorkerID: "0", rayvocab.LabelTPUPodType: res.PodType}
	reason, fits := lc.reason(placement.DescribeBundle(0, head, sel), head, sel)
	if fits > 0 && lc.anyFree(head, sel) { // the replica is about to reserve it
		return placement.Finding{}, false
	}
	return placement.Finding{Severity: placement.SeverityError, Code: placement.CodeHeadReservationFailed, Message: fmt.Sprintf(
		"slice 0 of the %s %s request (%s) of %s holds no head reservation: %s; the replica runtime gives up after its head_reservation_timeout_s and Serve retries the replica",
		res.AcceleratorVersion, res.Topology, res.PodType, rayruntime.SliceGroupName(app, dep, id), reason)}, true
}

// reason says why a bundle is not placed and counts the alive nodes that
// could hold it on an idle cluster. The live cluster reports no free
// resources per node, so a bundle some node could hold "waits for one to
// be free".
func (lc *liveCluster) reason(bundle string, res map[string]float64, sel map[string]string) (string, int) {
	var missing []string
	for _, k := range slices.Sorted(maps.Keys(res)) {
		if res[k] > 0 && !slices.ContainsFunc(lc.list, func(n *ray.Node) bool { return n.Resources[k] > 0 }) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return placement.NoResourceReason(bundle, missing), 0
	}
	labelled, fits := 0, 0
	ls := placement.NewLabelSelector(sel) // as accepted by Ray: parsed, not validated
	for _, n := range lc.list {
		if !ls.Matches(n.Labels) {
			continue
		}
		labelled++
		if !slices.ContainsFunc(slices.Collect(maps.Keys(res)), func(k string) bool { return n.Resources[k] < res[k] }) {
			fits++
		}
	}
	switch {
	case labelled == 0:
		return placement.NoLabelsReason(bundle, sel), 0
	case fits == 0:
		return placement.NoFitReason(bundle), 0
	}
	return placement.NoneFreeReason(bundle, fits), fits
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
