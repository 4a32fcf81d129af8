package raybackend

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/serveconfig"
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
	if err := b.usable("Diagnose"); err != nil {
		return nil, err
	}
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
	d := &appDiagnosis{lc: lc, live: live, jobs: jobs, diag: placement.Diagnosis{}}
	for _, dn := range slices.Sorted(maps.Keys(a.Deployments)) {
		res, sliced := reservations[dn]
		d.deployment(a.Name, dn, a.Deployments[dn], res, sliced)
	}
	return d.landings, d.diag, nil
}

// appDiagnosis gathers the landings and findings of an application's
// replicas, numbering the placement groups they hold in order.
type appDiagnosis struct {
	lc       *liveCluster
	live     []ray.PlacementGroupState // not REMOVED
	jobs     map[string]bool           // the jobs of Serve replicas
	landings []placement.Landing
	diag     placement.Diagnosis
	group    int
}

// deployment reports on every replica of deployment dn of app; sliced
// says its replicas own slices, reserved as res says.
func (d *appDiagnosis) deployment(app, dn string, dep ray.DeploymentDetails, res sliceReservation, sliced bool) {
	reps := slices.SortedFunc(slices.Values(dep.Replicas), func(x, y ray.ReplicaDetails) int { return cmp.Compare(x.ReplicaID, y.ReplicaID) })
	var heads []ray.PlacementGroupState
	if sliced {
		heads = headGroups(d.live, res.PodType, d.jobs)
	}
	// A held head belongs to the replica whose slice group is on that
	// slice; the others to the replicas holding no slice group.
	slicePG := make([]*ray.PlacementGroupState, len(reps))
	for i, r := range reps {
		slicePG[i] = findGroup(d.live, rayruntime.SliceGroupName(app, dn, r.ReplicaID))
		if pg := slicePG[i]; pg != nil && pg.State == ray.PlacementGroupCreated {
			on := d.lc.sliceOf(pg)
			heads = slices.DeleteFunc(heads, func(h ray.PlacementGroupState) bool {
				return h.State == ray.PlacementGroupCreated && d.lc.sliceOf(&h) == on
			})
		}
	}
	for i, r := range reps {
		part := placement.Part{Role: placement.RoleReplica, Name: dn, Index: i}
		var found placement.Diagnosis
		owned := 0
		if pg := findGroup(d.live, r.ActorName); pg != nil { // Serve's own group
			owned++
			found = append(found, d.held(pg, part, false)...)
		}
		if pg := slicePG[i]; pg != nil {
			owned++
			found = append(found, d.held(pg, part, true)...)
		} else if sliced && r.State != ray.ServeReplicaRunning {
			if len(heads) > 0 {
				h := heads[0]
				heads = heads[1:]
				owned++
				name := fmt.Sprintf("%s reservation of the %s %s slice of %s", rayvocab.HeadResource(res.PodType), res.AcceleratorVersion, res.Topology, res.sliceName(app, dn, r.ReplicaID))
				if f, ok := d.lc.groupFinding(&h, placement.GroupName(h.ID, name)); ok {
					found = append(found, f)
				}
			} else if f, ok := d.lc.headFinding(res, app, dn, r.ReplicaID); ok {
				found = append(found, f)
			}
		}
		if owned > 0 {
			d.group++
		}
		for _, f := range found {
			f.Part = part.String()
			d.diag = append(d.diag, f)
		}
	}
}

// held records where a group a replica holds landed and returns its
// findings: the group's state when it is not placed, else where its TPU
// bundles landed (errors only for a slice group, which its replica pinned
// itself).
func (d *appDiagnosis) held(pg *ray.PlacementGroupState, part placement.Part, errorsOnly bool) placement.Diagnosis {
	d.landings = append(d.landings, d.lc.landings(pg, d.group, part)...)
	if f, ok := d.lc.groupFinding(pg, placement.GroupName(pg.ID, pg.Name)); ok {
		return placement.Diagnosis{f}
	}
	var out placement.Diagnosis
	for _, f := range d.lc.rawLanding(pg).Diagnose() {
		if !errorsOnly || f.Severity == placement.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// reservation is the slice reservation a slice deployment's replicas
// read, as the diagnosis reads it.
type reservation = serveconfig.SliceReservation

// sliceReservation is the slice each replica of a deployment reserves
// when it starts: through raytpu's replica runtime (the reservation its
// user_config carries), or through Serve LLM's own code (llm).
type sliceReservation struct {
	reservation
	llm bool
}

// sliceName names the slice replica id of deployment dn of app reserves:
// the runtime's slice group, or, as Serve LLM leaves its group unnamed,
// the replica.
func (r sliceReservation) sliceName(app, dn, id string) string {
	if r.llm {
		return "Serve LLM replica " + id
	}
	return rayruntime.SliceGroupName(app, dn, id)
}

// appReservations reads the slice reservation of every deployment of a
// deployed config that carries one, by deployment name: the reservations
// raytpu's replica runtime reads, or what a Serve LLM application's
// models reserve (llmReservations). The config is what Ray echoes of the
// one Deploy sent, so it is read as the plan's typed config; one that is
// not (deployed by other means) has none.
func appReservations(config json.RawMessage) map[string]sliceReservation {
	out := map[string]sliceReservation{}
	var app serveconfig.Application
	if json.Unmarshal(config, &app) != nil {
		return out
	}
	if app.ImportPath == rayvocab.ServeLLMOpenAIBuilder {
		return llmReservations(app.Args)
	}
	for _, d := range app.Deployments {
		if r := d.Reservation; r != nil && r.PodType != "" {
			out[d.Name] = sliceReservation{reservation: *r}
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
