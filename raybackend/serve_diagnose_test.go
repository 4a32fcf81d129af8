package raybackend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

// holdScript reserves, as another tenant of the cluster would, host 0 of
// slice v4-16-0 and the whole of v4-16-1 with detached placement groups,
// leaving one free host on v4-16-0 and the v4-8.
const holdScript = `import ray
from ray.util.placement_group import placement_group
ray.init(namespace="raytpu-diag")
pgs = [
    placement_group([{"TPU": 4}], name="taken-host", lifetime="detached",
                    bundle_label_selector=[{"ray.io/tpu-slice-name": "v4-16-0", "ray.io/tpu-worker-id": "0"}]),
    placement_group([{"TPU": 4}] * 2, strategy="STRICT_SPREAD", name="busy-slice", lifetime="detached",
                    bundle_label_selector=[{"ray.io/tpu-slice-name": "v4-16-1"}] * 2),
]
ray.get([pg.ready() for pg in pgs], timeout=180)
`

const releaseScript = `import ray
from ray.util import get_placement_group, remove_placement_group
ray.init(namespace="raytpu-diag")
for name in ["taken-host", "busy-slice"]:
    remove_placement_group(get_placement_group(name))
`

// releaseHeldScript is releaseScript for a test that failed part way: it
// removes whichever of the two groups exist.
const releaseHeldScript = `import ray
from ray.util import get_placement_group, remove_placement_group
ray.init(namespace="raytpu-diag")
for name in ["taken-host", "busy-slice"]:
    try:
        pg = get_placement_group(name)
    except ValueError:
        continue
    remove_placement_group(pg)
`

// runPython runs a Python script as a Ray job on the cluster and fails the
// test unless it succeeds. The scripts bound their own waits; the 5
// minutes are for a loaded machine, where a job's driver alone has taken
// 38 s to connect. A job still running when the wait ends is stopped, so
// that it cannot change the shared cluster after the test has moved on.
// ctx is the test's, or in a cleanup (when the test's has ended) one of
// its own.
func runPython(ctx context.Context, t *testing.T, client *ray.Client, script string) {
	t.Helper()
	id, err := client.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "python -c '" + script + "'"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	info, err := client.WaitJob(wctx, id, ray.WaitOptions{PollInterval: 500 * time.Millisecond})
	if err != nil || info.Status != ray.JobSucceeded {
		logs, _ := client.JobLogs(ctx, id)
		if !info.Status.Terminal() {
			stopCtx, stop := context.WithTimeout(ctx, time.Minute)
			defer stop()
			if _, serr := client.StopJob(stopCtx, id); serr == nil {
				client.WaitJob(stopCtx, id, ray.WaitOptions{PollInterval: 500 * time.Millisecond})
			}
		}
		t.Fatalf("job %s: %v %v\n%s", id, info.Status, err, logs)
	}
}

// liveGroups reads the placement groups that are not REMOVED through the
// State API.
func liveGroups(t *testing.T, client *ray.Client) []ray.PlacementGroupState {
	t.Helper()
	pgs, err := client.PlacementGroups(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(pgs, func(pg ray.PlacementGroupState) bool { return pg.State == ray.PlacementGroupRemoved })
}

func waitGroups(t *testing.T, client *ray.Client, what string, ok func([]ray.PlacementGroupState) bool) []ray.PlacementGroupState {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		live := liveGroups(t, client)
		if ok(live) {
			return live
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement groups never became %s: %+v", what, live)
		}
		time.Sleep(time.Second)
	}
}

// slicesOfNodes maps node ids to their TPU slice names.
func slicesOfNodes(t *testing.T, client *ray.Client) map[string]string {
	t.Helper()
	nodes, err := client.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.ID] = n.Labels["ray.io/tpu-slice-name"]
	}
	return out
}

func findings(d placement.Diagnosis, code string) []placement.Finding {
	return slices.DeleteFunc(slices.Clone(d), func(f placement.Finding) bool { return f.Code != code })
}

// Live diagnosis on a real cluster posing as two v4-16 slices and a v4-8:
// per-chip bundles that land on two slices (as the simulator predicted
// before deploying), and a topology no slice can hold (Wait stops with the
// pending head reservation named). Diagnosing replicas that own whole
// slices, and scaling them down and away without leaking placement groups,
// is TestServeReplicasOwnSlices's part (same cluster); what `raytpu serve
// wait` prints for a stuck application and for a constructor that raises
// is TestServeWaitDiagnosisOnRealRay's, in the command's package.
func TestServeLiveDiagnosis(t *testing.T) {
	const spec = "2*v4-16,v4-8"
	parsed, err := sim.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
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
	for name, code := range map[string]string{"hello.py": helloModule, "summer.py": sliceModule} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("per-chip bundles span slices", func(t *testing.T) {
		// The simulator, with the same hosts taken, predicts the split
		// before anything is deployed.
		model, err := sim.NewCluster(parsed)
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range []sim.PlacementGroupRequest{
			{Name: "taken-host", Bundles: []map[string]float64{{"TPU": 4}}, BundleLabelSelector: []map[string]string{{"ray.io/tpu-slice-name": "v4-16-0", "ray.io/tpu-worker-id": "0"}}},
			{Name: "busy-slice", Strategy: placement.StrictSpread, Bundles: []map[string]float64{{"TPU": 4}, {"TPU": 4}},
				BundleLabelSelector: []map[string]string{{"ray.io/tpu-slice-name": "v4-16-1"}, {"ray.io/tpu-slice-name": "v4-16-1"}}},
		} {
			if pg, err := model.CreatePlacementGroup(req); err != nil || pg.State != sim.StateCreated {
				t.Fatalf("simulated %s: %+v, %v", req.Name, pg, err)
			}
		}
		bundles := []map[string]float64{{"TPU": 4}, {"TPU": 4}}
		predicted, err := model.PlaceBundles(sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: bundles})
		if err != nil {
			t.Fatal(err)
		}
		spans := findings(predicted.Diagnosis, placement.CodeSpansSlices)
		if len(spans) != 1 {
			t.Fatalf("simulator predicted %v, want one SpansSlices", predicted.Diagnosis)
		}

		// A failure below must not leave the application or the held
		// groups to the tests that share the cluster after this one.
		t.Cleanup(func() {
			if t.Failed() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				if err := b.Delete(ctx, "perchip"); err != nil && !errors.Is(err, backend.ErrNotFound) {
					t.Logf("cleanup: deleting perchip: %v", err)
				}
				runPython(ctx, t, client, releaseHeldScript)
			}
		})
		runPython(t.Context(), t, client, holdScript)
		raytest.StartServe(t, client, cluster.DashboardURL)
		app := serve.Application{
			Name: "perchip", RoutePrefix: "/perchip", ImportPath: "hello:app",
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: dir},
			Deployments: []serve.Deployment{{
				Name: "Hello", NumReplicas: serveconfig.ReplicaCount(1),
				RayActorOptions:        &serve.RayActorOptions{NumCPUs: new(0.0)},
				PlacementGroupBundles:  bundles,
				PlacementGroupStrategy: placement.StrictSpread,
			}},
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		// Serve calls the replica RUNNING; Wait's last diagnosis does not.
		ran, err := app.Run(ctx, b, nil)
		var se *backend.ServiceError
		if !errors.As(err, &se) || !errors.Is(err, backend.ErrPlacement) || ran == nil || ran.State != backend.ServiceRunning {
			t.Fatalf("Run(perchip) = %+v, %v; want the RUNNING status and a *backend.ServiceError matching ErrPlacement", ran, err)
		}
		t.Logf("Run: %v", err)
		if !strings.Contains(err.Error(), "is RUNNING but its TPU bundles are misplaced") || !strings.Contains(err.Error(), "SpansSlices") {
			t.Errorf("Run's error %q, want it to say the RUNNING application is misplaced and why", err)
		}
		if !slices.Equal(ran.Diagnosis, se.Status.Diagnosis) || len(findings(ran.Diagnosis, placement.CodeSpansSlices)) != 1 {
			t.Errorf("Run's status diagnosis %v, want the one SpansSlices finding of its error", ran.Diagnosis)
		}
		st, err := b.Diagnose(t.Context(), "perchip")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("live diagnosis:\n%s", st.Diagnosis)
		live := findings(st.Diagnosis, placement.CodeSpansSlices)
		if len(live) != 1 || live[0].Part != `deployment "Hello" replica 0` || live[0].Message != spans[0].Message {
			t.Errorf("live SpansSlices findings %+v,\nwant one for replica 0 in the simulator's words: %q", live, spans[0].Message)
		}
		var on []string
		for _, l := range st.Landings {
			if l.State != ray.PlacementGroupCreated {
				t.Errorf("landing %+v, want CREATED", l)
			}
			on = append(on, l.SliceName)
		}
		slices.Sort(on)
		if want := []string{"v4-16-0", "v4-8-0"}; !slices.Equal(on, want) {
			t.Errorf("bundles landed on slices %v, want %v (the free host of v4-16-0 and the v4-8)", on, want)
		}

		if err := b.Delete(t.Context(), "perchip"); err != nil {
			t.Fatal(err)
		}
		waitGone(t, b, "perchip")
		runPython(t.Context(), t, client, releaseScript)
		waitGroups(t, client, "none", func(l []ray.PlacementGroupState) bool { return len(l) == 0 })
	})

	t.Run("no free slice", func(t *testing.T) {
		// v4 2x2x4 is a v4-32 slice; the cluster has none.
		raytest.StartServe(t, client, cluster.DashboardURL)
		app := serve.Application{
			Name: "toobig", RoutePrefix: "/toobig", ImportPath: "summer:app",
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: dir},
			Deployments: []serve.Deployment{{
				Name: "Summer", NumReplicas: serveconfig.ReplicaCount(1),
				RayActorOptions:   &serve.RayActorOptions{NumCPUs: new(0.0)},
				AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x4", HeadReservationTimeout: 20 * time.Second},
			}},
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		start := time.Now()
		_, err := app.Run(ctx, b, &backend.WaitOptions{StuckAfter: 10 * time.Second})
		var se *backend.ServiceError
		if !errors.As(err, &se) || !errors.Is(err, backend.ErrPlacement) || ctx.Err() != nil {
			t.Fatalf("Run(toobig) = %v, want a *backend.ServiceError for a stuck application, before the context ends", err)
		}
		t.Logf("stuck after %v: %v", time.Since(start).Round(time.Second), err)
		if se.Status.State != backend.ServiceDeploying {
			t.Errorf("state %s, want DEPLOYING", se.Status.State)
		}
		named := slices.ContainsFunc(se.Status.Diagnosis, func(f placement.Finding) bool {
			return f.Severity == placement.SeverityError && f.Part == `deployment "Summer" replica 0` &&
				(f.Code == placement.CodeInfeasible || f.Code == placement.CodeHeadReservationFailed) &&
				strings.Contains(f.Message, "TPU-v4-32-head") && strings.Contains(f.Message, "v4 2x2x4") &&
				strings.Contains(f.Message, "no node has resource TPU-v4-32-head")
		})
		if !named || !strings.Contains(err.Error(), "TPU-v4-32-head") {
			t.Errorf("diagnosis %v, want an error finding for replica 0 naming the pending TPU-v4-32-head reservation of the v4 2x2x4 slice", se.Status.Diagnosis)
		}

		if err := b.Delete(t.Context(), "toobig"); err != nil {
			t.Fatal(err)
		}
		waitGone(t, b, "toobig")
		waitGroups(t, client, "none", func(l []ray.PlacementGroupState) bool { return len(l) == 0 })
	})

	waitGroups(t, client, "none (the shared cluster left clean)", func(l []ray.PlacementGroupState) bool { return len(l) == 0 })
}
