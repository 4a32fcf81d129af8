package raybackend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// sliceModule is a deployment whose replicas own a TPU slice: every host
// contributes process_index+1 to a cross-host JAX all-gather and host 0
// answers with the sum and every host's node labels.
const sliceModule = `from ray import serve
from raytpu_replica import tpu_slice, get_slice_context


@serve.deployment
@tpu_slice
class Summer:
    def __init__(self, scale):
        self.scale = scale
        self.offset = 0.0

    def reconfigure(self, config):
        self.offset = float(config.get("offset", 0))

    def __call__(self, request):
        import jax
        import jax.numpy as jnp
        from jax.experimental import multihost_utils

        ctx = get_slice_context()
        parts = multihost_utils.process_allgather(jnp.array([jax.process_index() + 1.0]))
        return {
            "sum": float(parts.sum()) * self.scale + self.offset,
            "process_index": jax.process_index(),
            "process_count": jax.process_count(),
            "device_count": jax.device_count(),
            "path": request.path,
            "replica": ctx.name,
            "hosts": ctx.hosts,
        }


app = Summer.bind(scale=10.0)
`

type sliceHost struct {
	Rank   int               `json:"rank"`
	NodeID string            `json:"node_id"`
	Labels map[string]string `json:"labels"`
}

type sliceAnswer struct {
	Sum          float64     `json:"sum"`
	ProcessIndex int         `json:"process_index"`
	ProcessCount int         `json:"process_count"`
	DeviceCount  int         `json:"device_count"`
	Path         string      `json:"path"`
	Replica      string      `json:"replica"`
	Hosts        []sliceHost `json:"hosts"`
}

// placementGroup is one entry of the State API's placement group list.
type placementGroup struct {
	ID      string `json:"placement_group_id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Bundles []struct {
		Resources map[string]float64 `json:"unit_resources"`
	} `json:"bundles"`
}

// livePlacementGroups reads the cluster's placement groups from the
// dashboard's State API and returns those not REMOVED.
func livePlacementGroups(t *testing.T, dashboard string) []placementGroup {
	t.Helper()
	resp, err := http.Get(dashboard + "/api/v0/placement_groups?limit=1000&detail=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var doc struct {
		Data struct {
			Result struct {
				Result []placementGroup `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil {
		t.Fatalf("State API placement groups: %d %.300s", resp.StatusCode, body)
	}
	var live []placementGroup
	for _, pg := range doc.Data.Result.Result {
		if pg.State != "REMOVED" {
			live = append(live, pg)
		}
	}
	return live
}

// waitPlacementGroups polls until the live placement groups satisfy ok.
func waitPlacementGroups(t *testing.T, dashboard, what string, ok func([]placementGroup) bool) []placementGroup {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		live := livePlacementGroups(t, dashboard)
		if ok(live) {
			return live
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement groups never became %s: %+v", what, live)
		}
		time.Sleep(time.Second)
	}
}

func replicaIDs(t *testing.T, client *ray.Client, app, dep string) []string {
	t.Helper()
	d, err := client.ServeApplications(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range d.Applications[app].Deployments[dep].Replicas {
		ids = append(ids, r.ReplicaID)
	}
	slices.Sort(ids)
	return ids
}

func waitGone(t *testing.T, b *raybackend.Backend, name string) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context()) // also from a Cleanup
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := b.Status(ctx, name); errors.Is(err, backend.ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("application %s still there 90s after Delete", name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Replicas that own a TPU slice, on a real cluster whose workers pose as
// the hosts of two v4-16 slices and one v4-8: each replica reserves a
// slice of its own and runs one JAX program over its hosts; scaling down
// and deleting free the slices; a topology no slice can hold leaves the
// application DEPLOYING with the runtime's message.
func TestServeReplicasOwnSlices(t *testing.T) {
	cluster := sliceCluster.Get(t)
	client, err := ray.NewClient(cluster.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	requireClean(t, client)
	b, err := raybackend.New(client, raybackend.WithPollInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "summer.py"), []byte(sliceModule), 0o644); err != nil {
		t.Fatal(err)
	}
	app := func(name string, replicas int, topology string) serve.Application {
		return serve.Application{
			Name: name, RoutePrefix: "/" + name, ImportPath: "summer:app",
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: dir},
			Deployments: []serve.Deployment{{
				Name: "Summer", NumReplicas: serveconfig.ReplicaCount(replicas),
				UserConfig:        map[string]any{"offset": 0.5},
				RayActorOptions:   &serve.RayActorOptions{NumCPUs: new(0.0)},
				AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: topology, HeadReservationTimeout: 25 * time.Second},
				// One request at a time per replica: see askSlices.
				MaxOngoingRequests: 1,
			}},
		}
	}

	t.Run("pending", func(t *testing.T) {
		// v4 2x2x4 is a v4-32 slice; the cluster has none.
		raytest.StartServe(t, client, cluster.DashboardURL)
		t.Cleanup(func() {
			// When the subtest stopped early, delete toobig all the same:
			// the next subtest starts Serve anew and needs it gone.
			if err := b.Delete(context.Background(), "toobig"); errors.Is(err, backend.ErrNotFound) {
				return
			} else if err != nil {
				t.Errorf("Delete(toobig): %v", err)
				return
			}
			waitGone(t, b, "toobig")
		})
		ctx, cancel := contextWithTimeout(t, 50*time.Second)
		defer cancel()
		_, err := app("toobig", 1, "2x2x4").Run(ctx, b, nil)
		var se *backend.ServiceError
		if !errors.As(err, &se) || se.Status.State != backend.ServiceDeploying || !errors.Is(err, ctx.Err()) {
			t.Fatalf("Run(toobig) = %v, want a *backend.ServiceError for a wait cut short while DEPLOYING", err)
		}
		t.Logf("status when the wait ended: %s", se.Status.Message)
		// On a loaded machine the replica may not have failed its first
		// reservation yet when the wait ends: read the deployment's message
		// until it does. Serve shows a failed start as "A replica failed to
		// start with exception. Retrying N more time(s)" while DEPLOYING, and
		// keeps the last failure in DEPLOY_FAILED's message once its retries
		// (3 for one replica) run out; between failures its slow-start
		// warning may stand in the message instead. Never RUNNING.
		msg := se.Status.Message
		for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(msg, "raytpu: slice reservation pending") && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			st, err := b.Status(t.Context(), "toobig")
			if err != nil {
				t.Fatal(err)
			}
			if st.State != backend.ServiceDeploying && st.State != backend.ServiceDeployFailed {
				t.Fatalf("toobig is %s (%s), want DEPLOYING while its slice reservation is pending", st.State, st.Message)
			}
			msg = st.Message
			for _, d := range st.Deployments {
				msg += "\n" + d.Name + ": " + d.Message
			}
		}
		if !strings.Contains(msg, "raytpu: slice reservation pending") || !strings.Contains(msg, "v4 2x2x4") {
			t.Errorf("message %q, want the runtime's \"slice reservation pending\" for the v4 2x2x4 slice", msg)
		}
		t.Logf("status read: %s", msg)
		if err := b.Delete(t.Context(), "toobig"); err != nil {
			t.Fatal(err)
		}
		waitGone(t, b, "toobig")
		waitPlacementGroups(t, cluster.DashboardURL, "none", func(l []placementGroup) bool { return len(l) == 0 })
	})

	t.Run("two replicas on two slices", func(t *testing.T) {
		// Deleting the last application shuts Serve down: start it each time.
		proxy := raytest.StartServe(t, client, cluster.DashboardURL)
		if _, err := app("summer", 2, "2x2x2").Run(t.Context(), b, nil); err != nil {
			t.Fatalf("Run: %v", err)
		}
		bySlice := map[string]string{} // replica -> slice name
		for i := 0; i < 40 && len(bySlice) < 2; i += 3 {
			for j, a := range askSlices(t, fmt.Sprintf("%s/summer/q%d", proxy, i), fmt.Sprintf("%s/summer/q%d", proxy, i+1), fmt.Sprintf("%s/summer/q%d", proxy, i+2)) {
				// Hosts contribute 1 and 2: (1+2)*scale 10 + offset 0.5.
				if a.Sum != 30.5 || a.ProcessIndex != 0 || a.ProcessCount != 2 || a.DeviceCount != 8 || a.Path != fmt.Sprintf("/summer/q%d", i+j) {
					t.Errorf("answer %+v, want sum 30.5 from host 0 of a 2-process JAX program over 8 devices", a)
				}
				if len(a.Hosts) != 2 {
					t.Fatalf("answer lists %d hosts, want 2", len(a.Hosts))
				}
				h0, h1 := a.Hosts[0], a.Hosts[1]
				name := h0.Labels["ray.io/tpu-slice-name"]
				if name == "" || h1.Labels["ray.io/tpu-slice-name"] != name || h0.NodeID == h1.NodeID ||
					h0.Labels["ray.io/tpu-worker-id"] == h1.Labels["ray.io/tpu-worker-id"] || h0.Labels["ray.io/tpu-pod-type"] != "v4-16" {
					t.Errorf("replica %s hosts %+v, want distinct hosts of one v4-16 slice", a.Replica, a.Hosts)
				}
				for r, h := range a.Hosts {
					if h.Rank != r || h.Labels["ray.io/tpu-worker-id"] != strconv.Itoa(r) {
						t.Errorf("replica %s host %d: rank %d on TPU worker %s, want JAX process i on TPU worker i", a.Replica, r, h.Rank, h.Labels["ray.io/tpu-worker-id"])
					}
				}
				bySlice[a.Replica] = name
			}
		}
		if len(bySlice) != 2 {
			t.Fatalf("answers came from replicas %v, want 2", bySlice)
		}
		var names []string
		for _, n := range bySlice {
			names = append(names, n)
		}
		if names[0] == names[1] {
			t.Errorf("both replicas on slice %s, want two slices", names[0])
		}
		live := livePlacementGroups(t, cluster.DashboardURL)
		named := 0
		for _, pg := range live {
			if strings.HasPrefix(pg.Name, "raytpu-slice:summer:Summer:") {
				named++
			}
		}
		if named != 2 {
			t.Errorf("%d slice placement groups of summer live (%+v), want 2", named, live)
		}
		// The live diagnosis sees the same: one whole slice per replica,
		// two slices, nothing wrong.
		st, err := b.Diagnose(t.Context(), "summer")
		if err != nil {
			t.Fatal(err)
		}
		if st.Diagnosis.HasErrors() {
			t.Errorf("diagnosis of two running slice replicas: %v, want no error", st.Diagnosis)
		}
		held := map[int]map[string]bool{} // landing group -> slices
		for _, l := range st.Landings {
			if held[l.Group] == nil {
				held[l.Group] = map[string]bool{}
			}
			held[l.Group][l.SliceName] = true
		}
		if len(held) != 2 || len(held[0]) != 1 || len(held[1]) != 1 || fmt.Sprint(held[0]) == fmt.Sprint(held[1]) {
			t.Errorf("diagnosis: replicas hold slices %v, want one whole slice each, two slices", held)
		}

		// Scale to one replica: the other replica's slice is freed.
		if _, err := app("summer", 1, "2x2x2").Run(t.Context(), b, nil); err != nil {
			t.Fatalf("Run with 1 replica: %v", err)
		}
		live = waitPlacementGroups(t, cluster.DashboardURL, "one slice's", func(l []placementGroup) bool { return len(l) == 2 })
		var kept string
		for _, pg := range live {
			if pg.Name != "" {
				kept = pg.Name
			} else if len(pg.Bundles) != 1 || pg.Bundles[0].Resources["TPU-v4-16-head"] != 1 {
				t.Errorf("unnamed placement group %+v, want only the kept slice's head reservation", pg)
			}
		}
		if a := askSlice(t, proxy+"/summer"); a.Replica != kept {
			t.Errorf("answer from %s, want the replica holding the live slice %s", a.Replica, kept)
		}
		// Both groups left, the slice group and its head reservation, hold
		// bundles on the kept replica's slice only.
		nodes := slicesOfNodes(t, client)
		var keptSlice string
		groups := liveGroups(t, client)
		for _, pg := range groups {
			if pg.Name == kept && len(pg.Bundles) > 0 {
				keptSlice = nodes[pg.Bundles[0].NodeID]
			}
		}
		for _, pg := range groups {
			for _, bd := range pg.Bundles {
				if s := nodes[bd.NodeID]; s != keptSlice || s == "" {
					t.Errorf("placement group %s (%q) holds a bundle on %q after scaling down; only the kept slice %q should be held", pg.ID, pg.Name, s, keptSlice)
				}
			}
		}
		ids := replicaIDs(t, client, "summer", "Summer")
		if len(ids) != 1 {
			t.Fatalf("replicas %v, want 1", ids)
		}
		// The same config again changes nothing.
		if _, err := app("summer", 1, "2x2x2").Run(t.Context(), b, nil); err != nil {
			t.Fatalf("re-Run: %v", err)
		}
		if again := replicaIDs(t, client, "summer", "Summer"); !slices.Equal(again, ids) {
			t.Errorf("replicas after redeploying the same config %v, want %v", again, ids)
		}

		if err := b.Delete(t.Context(), "summer"); err != nil {
			t.Fatal(err)
		}
		waitGone(t, b, "summer")
		waitPlacementGroups(t, cluster.DashboardURL, "none", func(l []placementGroup) bool { return len(l) == 0 })
	})
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
