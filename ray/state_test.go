package ray_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/ray"
)

// The State API on a real cluster: a
// placement group a job created and left behind (placed, with its bundle's
// node), one that no node can hold (PENDING, scheduling INFEASIBLE, no
// node), and the job's detached actor.
func TestStateAPIOnRealRay(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	script := `import ray
from ray.util.placement_group import placement_group
ray.init(namespace="state-test")
pg = placement_group([{"CPU": 0.5}], name="state-placed", lifetime="detached")
ray.get(pg.ready(), timeout=60)
placement_group([{"TPU-v4-32-head": 1}], name="state-infeasible", lifetime="detached",
                bundle_label_selector=[{"ray.io/tpu-worker-id": "0"}])

@ray.remote(num_cpus=0)
class Keeper:
    pass

Keeper.options(name="state-keeper", lifetime="detached").remote()
`
	id, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "python -c '" + script + "'"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if info, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 300 * time.Millisecond}); err != nil || info.Status != ray.JobSucceeded {
		logs, _ := c.JobLogs(t.Context(), id)
		t.Fatalf("job: %v %v\n%s", info.Status, err, logs)
	}

	nodes, err := c.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || !nodes[0].IsHead || nodes[0].ID == "" {
		t.Fatalf("nodes %+v, want the head alone", nodes)
	}
	head := nodes[0].ID

	pgs, err := c.PlacementGroups(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ray.PlacementGroupState{}
	for _, pg := range pgs {
		byName[pg.Name] = pg
	}
	placed, ok := byName["state-placed"]
	if !ok || placed.State != ray.PlacementGroupCreated || !placed.IsDetached || len(placed.Bundles) != 1 ||
		placed.Bundles[0].NodeID != head || placed.Bundles[0].Resources["CPU"] != 0.5 || placed.Stats.SchedulingState != ray.PlacementGroupSchedulingFinished {
		t.Errorf("state-placed = %+v, want CREATED with its {CPU: 0.5} bundle on the head", placed)
	}
	stuck, ok := byName["state-infeasible"]
	if !ok || stuck.State != ray.PlacementGroupPending || stuck.Stats.SchedulingState != ray.PlacementGroupSchedulingInfeasible ||
		len(stuck.Bundles) != 1 || stuck.Bundles[0].NodeID != "" || stuck.Bundles[0].LabelSelector["ray.io/tpu-worker-id"] != "0" ||
		stuck.Stats.CreationRequestReceivedNs == 0 {
		t.Errorf("state-infeasible = %+v, want PENDING, scheduling INFEASIBLE, unplaced, with its label selector and creation time", stuck)
	}

	actors, err := c.Actors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(actors, func(a ray.ActorState) bool {
		return a.Name == "state-keeper" && a.ClassName == "Keeper" && a.RayNamespace == "state-test" && a.ActorID != "" && a.JobID != ""
	}) {
		t.Errorf("actors %+v, want the detached Keeper", actors)
	}
}

// Answers Ray can give that the real cluster cannot be made to: a State
// API failure reported in the body, and a list cut short.
func TestStateAPIAnswers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("detail") != "1" || r.URL.Query().Get("limit") == "" {
			http.Error(w, "want detail and limit", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/api/v0/placement_groups":
			w.Write([]byte(`{"result": false, "msg": "Failed to query the GCS", "data": {}}`))
		case "/api/v0/actors":
			w.Write([]byte(`{"result": true, "msg": "", "data": {"result": {"total": 3, "num_after_truncation": 1, "result": [{"actor_id": "a1", "state": "ALIVE"}]}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := ray.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PlacementGroups(t.Context())
	var ae *ray.APIError
	if !errors.As(err, &ae) || ae.Path != "/api/v0/placement_groups" || !strings.Contains(ae.Message, "Failed to query the GCS") {
		t.Errorf("PlacementGroups = %v, want an *ray.APIError with Ray's message", err)
	}
	actors, err := c.Actors(t.Context())
	if err == nil || len(actors) != 1 || actors[0].ActorID != "a1" || !strings.Contains(err.Error(), "1 of 3") {
		t.Errorf("Actors = %+v, %v; want the one listed actor and an error saying the list was cut short", actors, err)
	}
}
