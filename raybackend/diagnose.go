package raybackend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/replica"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Diagnose reads the named application's status and explains where its
// replicas stand, from the cluster itself: the placement groups each
// replica holds (Serve's own group of a deployment with
// placement_group_bundles, named after the replica actor; the slice group
// and the TPU-<pod type>-head reservation of raytpu's replica runtime),
// their states, and the nodes and slices their bundles landed on. The
// findings use the simulator's codes and words (placement.CodeSpansSlices,
// CodePending, CodeInfeasible, CodeHeadReservationFailed, ...), each
// naming its replica (Finding.Part); the status's Landings say where every
// bundle is. ErrNotFound when Serve has no application of that name.
func (b *Backend) Diagnose(ctx context.Context, name string) (*backend.ServiceStatus, error) {
	d, err := b.client.ServeApplications(ctx)
	if err != nil {
		return nil, err
	}
	a, ok := d.Applications[name]
	if !ok {
		return nil, fmt.Errorf("raybackend: Serve application %q: %w", name, backend.ErrNotFound)
	}
	st := serviceStatus(a)
	if st.Landings, st.Diagnosis, err = b.diagnose(ctx, a); err != nil {
		return st, err
	}
	return st, nil
}

// diagnose reads the cluster's placement groups, nodes and actors and
// reports on every replica of a.
func (b *Backend) diagnose(ctx context.Context, a ray.ApplicationDetails) ([]placement.Landing, placement.Diagnosis, error) {
	pgs, err := b.client.PlacementGroups(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("raybackend: diagnosing %q: %w", a.Name, err)
	}
	nodes, err := b.client.Nodes(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("raybackend: diagnosing %q: %w", a.Name, err)
	}
	actors, err := b.client.Actors(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("raybackend: diagnosing %q: %w", a.Name, err)
	}
	lc := newLiveCluster(nodes)
	live := slices.DeleteFunc(pgs, func(pg ray.PlacementGroupState) bool { return pg.State == ray.PlacementGroupRemoved })
	lc.hold(live)
	reservations := appReservations(a.DeployedAppConfig)
	jobs := map[string]bool{}
	for _, act := range actors {
		if strings.HasPrefix(act.Name, "SERVE_REPLICA::") {
			jobs[act.JobID] = true
		}
	}
	var (
		landings []placement.Landing
		diag     = placement.Diagnosis{}
		group    int
	)
	for _, dn := range slices.Sorted(maps.Keys(a.Deployments)) {
		dep := a.Deployments[dn]
		reps := slices.SortedFunc(slices.Values(dep.Replicas), func(x, y ray.ReplicaDetails) int { return cmp.Compare(x.ReplicaID, y.ReplicaID) })
		res, sliced := reservations[dn]
		var heads []ray.PlacementGroupState
		if sliced {
			heads = headGroups(live, res.PodType, jobs)
		}
		// A held head belongs to the replica whose slice group is on
		// that slice; the others to the replicas holding no slice group.
		slicePG := make([]*ray.PlacementGroupState, len(reps))
		for i, r := range reps {
			slicePG[i] = findGroup(live, "raytpu-slice:"+a.Name+":"+dn+":"+r.ReplicaID)
			if pg := slicePG[i]; pg != nil && pg.State == ray.PlacementGroupCreated {
				on := lc.sliceOf(pg)
				heads = slices.DeleteFunc(heads, func(h ray.PlacementGroupState) bool {
					return h.State == ray.PlacementGroupCreated && lc.sliceOf(&h) == on
				})
			}
		}
		for i, r := range reps {
			part := placement.Part{Role: placement.RoleReplica, Name: dn, Index: i}
			var found placement.Diagnosis
			add := func(f placement.Finding) {
				f.Part = part.String()
				found = append(found, f)
			}
			owned := 0
			if pg := findGroup(live, r.ActorName); pg != nil { // Serve's own group
				owned++
				landings = append(landings, lc.landings(pg, group, part)...)
				if f, ok := lc.groupFinding(pg, placement.GroupName(pg.ID, pg.Name)); ok {
					add(f)
				} else {
					for _, f := range lc.rawLanding(pg).Diagnose() {
						add(f)
					}
				}
			}
			if pg := slicePG[i]; pg != nil {
				owned++
				landings = append(landings, lc.landings(pg, group, part)...)
				if f, ok := lc.groupFinding(pg, placement.GroupName(pg.ID, pg.Name)); ok {
					add(f)
				} else {
					for _, f := range lc.rawLanding(pg).Diagnose() {
						if f.Severity == placement.SeverityError {
							add(f)
						}
					}
				}
			} else if sliced && r.State != ray.ServeReplicaRunning {
				if len(heads) > 0 {
					h := heads[0]
					heads = heads[1:]
					owned++
					name := fmt.Sprintf("%s reservation of the %s %s slice of raytpu-slice:%s:%s:%s", rayvocab.HeadResource(res.PodType), res.AcceleratorVersion, res.Topology, a.Name, dn, r.ReplicaID)
					if f, ok := lc.groupFinding(&h, placement.GroupName(h.ID, name)); ok {
						add(f)
					}
				} else if f, ok := lc.headFinding(res, a.Name, dn, r.ReplicaID); ok {
					add(f)
				}
			}
			if owned > 0 {
				group++
			}
			diag = append(diag, found...)
		}
	}
	return landings, diag, nil
}

// reservation is the part of a slice deployment's user_config the
// diagnosis reads.
type reservation struct {
	Topology           string             `json:"topology"`
	AcceleratorVersion string             `json:"accelerator_version"`
	PodType            string             `json:"pod_type"`
	ResourcesPerBundle map[string]float64 `json:"resources_per_bundle"`
}

// appReservations reads the slice reservation of every deployment of a
// deployed config that carries one, by deployment name.
func appReservations(config json.RawMessage) map[string]reservation {
	var app struct {
		Deployments []struct {
			Name       string                     `json:"name"`
			UserConfig map[string]json.RawMessage `json:"user_config"`
		} `json:"deployments"`
	}
	out := map[string]reservation{}
	if json.Unmarshal(config, &app) != nil {
		return out
	}
	for _, d := range app.Deployments {
		var r reservation
		if raw, ok := d.UserConfig[replica.ReservationKey]; ok && json.Unmarshal(raw, &r) == nil && r.PodType != "" {
			out[d.Name] = r
		}
	}
	return out
}

func findGroup(pgs []ray.PlacementGroupState, name string) *ray.PlacementGroupState {
	if name == "" {
		return nil
	}
	for i := range pgs {
		if pgs[i].Name == name {
			return &pgs[i]
		}
	}
	return nil
}

// headGroups lists the unnamed head reservations of a pod type made by
// Serve replicas (by their job, when known), oldest first.
func headGroups(pgs []ray.PlacementGroupState, podType string, jobs map[string]bool) []ray.PlacementGroupState {
	head := rayvocab.HeadResource(podType)
	var out []ray.PlacementGroupState
	for _, pg := range pgs {
		if pg.Name == "" && len(pg.Bundles) == 1 && pg.Bundles[0].Resources[head] > 0 && (len(jobs) == 0 || jobs[pg.CreatorJobID]) {
			out = append(out, pg)
		}
	}
	slices.SortStableFunc(out, func(x, y ray.PlacementGroupState) int {
		return cmp.Compare(x.Stats.CreationRequestReceivedNs, y.Stats.CreationRequestReceivedNs)
	})
	return out
}

// liveCluster is the cluster's alive nodes as the State API lists them.
type liveCluster struct {
	nodes map[string]*ray.NodeState
	// hosts counts the alive hosts of each slice, by slice name.
	hosts map[string]int
	list  []*ray.NodeState
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

func newLiveCluster(nodes []ray.NodeState) *liveCluster {
	lc := &liveCluster{nodes: map[string]*ray.NodeState{}, hosts: map[string]int{}}
	for i := range nodes {
		n := &nodes[i]
		if n.State != "ALIVE" {
			continue
		}
		lc.nodes[n.NodeID] = n
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
			l.Node, l.SliceName = n.NodeName, n.Labels[rayvocab.LabelTPUSliceName]
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
		hosts[n.NodeID] = true
		s := n.Labels[rayvocab.LabelTPUSliceName]
		if s == "" {
			continue
		}
		if bySlice[s] == nil {
			bySlice[s], sliceHosts[s] = &placement.SliceShare{Slice: s}, map[string]bool{}
			podType = n.Labels[rayvocab.LabelTPUPodType]
		}
		bySlice[s].TPU += t
		sliceHosts[s][n.NodeID] = true
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
		"slice 0 of the %s %s request (%s) of raytpu-slice:%s:%s:%s holds no head reservation: %s; the replica runtime gives up after its head_reservation_timeout_s and Serve retries the replica",
		res.AcceleratorVersion, res.Topology, res.PodType, app, dep, id, reason)}, true
}

// reason says why a bundle is not placed and counts the alive nodes that
// could hold it on an idle cluster. The live cluster reports no free
// resources per node, so a bundle some node could hold "waits for one to
// be free".
func (lc *liveCluster) reason(bundle string, res map[string]float64, sel map[string]string) (string, int) {
	var missing []string
	for _, k := range slices.Sorted(maps.Keys(res)) {
		if res[k] > 0 && !slices.ContainsFunc(lc.list, func(n *ray.NodeState) bool { return n.ResourcesTotal[k] > 0 }) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return placement.NoResourceReason(bundle, missing), 0
	}
	labelled, fits := 0, 0
	for _, n := range lc.list {
		if !matches(n.Labels, sel) {
			continue
		}
		labelled++
		if !slices.ContainsFunc(slices.Collect(maps.Keys(res)), func(k string) bool { return n.ResourcesTotal[k] < res[k] }) {
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
	return slices.ContainsFunc(lc.list, func(n *ray.NodeState) bool {
		if !matches(n.Labels, sel) {
			return false
		}
		for k, v := range res {
			if n.ResourcesTotal[k]-lc.held[n.NodeID][k] < v {
				return false
			}
		}
		return true
	})
}

// matches applies a Ray label selector: "v", "!v", "in(a,b)", "!in(a,b)".
func matches(labels, sel map[string]string) bool {
	for k, want := range sel {
		v, has := labels[k]
		neg := strings.HasPrefix(want, "!")
		want = strings.TrimPrefix(want, "!")
		var in bool
		if inner, ok := strings.CutPrefix(want, "in("); ok {
			in = has && slices.Contains(strings.Split(strings.TrimSuffix(inner, ")"), ","), v)
		} else {
			in = has && v == want
		}
		if in == neg {
			return false
		}
	}
	return true
}

// errStuck is the cause Wait's own context ends with when watchStuck found
// the application stuck.
var errStuck = errors.New("raybackend: application stuck")

// watchStuck waits until the application has been DEPLOYING for after,
// then diagnoses it on every poll until the diagnosis finds it stuck (an
// error, or a pending placement group) and returns its status with the
// diagnosis; nil when ctx ends first.
func (b *Backend) watchStuck(ctx context.Context, name string, after time.Duration) *backend.ServiceStatus {
	t := time.NewTimer(after)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	for {
		d, err := b.client.ServeApplications(ctx)
		if a, ok := d.Applications[name]; err == nil && ok && a.Status == ray.ServeAppDeploying {
			landings, diag, err := b.diagnose(ctx, a)
			if err == nil && isStuck(diag) {
				st := serviceStatus(a)
				st.Message = strings.TrimSpace(strings.Join(appMessages(a), "\n"))
				st.Landings, st.Diagnosis = landings, diag
				return st
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(max(b.poll, time.Second)):
		}
	}
}

func isStuck(d placement.Diagnosis) bool {
	return d.HasErrors() || slices.ContainsFunc(d, func(f placement.Finding) bool { return f.Code == placement.CodePending })
}

// appMessages lists the application's message and those of its
// deployments that are not HEALTHY, as Ray's wait error does.
func appMessages(a ray.ApplicationDetails) []string {
	var msgs []string
	if m := strings.TrimSpace(a.Message); m != "" {
		msgs = append(msgs, m)
	}
	for _, dn := range slices.Sorted(maps.Keys(a.Deployments)) {
		dep := a.Deployments[dn]
		if dep.Status != ray.ServeDeploymentHealthy && strings.TrimSpace(dep.Message) != "" {
			msgs = append(msgs, fmt.Sprintf("deployment %q is %s: %s", dn, dep.Status, strings.TrimSpace(dep.Message)))
		}
	}
	return msgs
}
