package raybackend_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/gcsemu"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/sim"
)

// sliceCluster poses as two v4-16 slices and a v4-8. TestServeLiveDiagnosis
// and TestServeReplicasOwnSlices share it in turn; each starts by checking
// that it is clean (requireClean) and leaves it so.
var sliceCluster = &raytest.Shared{Config: raycluster.Config{
	Nodes: raycluster.NodesFor(mustSpec("2*v4-16,v4-8"), 1),
	// Serve's proxy (on the head) sends every request to a replica on
	// its own node when there is one; the slice replicas are CPU-only
	// orchestrators that may land on the head. Route over all replicas so
	// that each answers.
	HeadEnv: map[string]string{"RAY_SERVE_PROXY_PREFER_LOCAL_NODE_ROUTING": "0"},
}}

// headCluster is a head-only cluster. TestConformanceOnRealRay and
// TestRunOnRealRay share it in turn, neither in parallel with the other:
// each starts Serve with HTTP options of its own, which a running Serve
// does not change. Each starts by checking that it is clean
// (requireCleanHead) and leaves it so. Its 4 CPUs are the conformance
// suite's: its rules run their jobs and applications in parallel.
var headCluster = &raytest.Shared{Config: raycluster.Config{HeadCPUs: 4}}

// storage is Cloud Storage for headCluster's jobs: a GCS emulator, which
// TestMain starts and points the head's processes at (gcsemu.Server.Env),
// so that Ray's runtime_env fetches gs:// working_dirs from it.
var storage *gcsemu.Server

func TestMain(m *testing.M) {
	var err error
	if storage, err = gcsemu.Start("127.0.0.1"); err != nil {
		fmt.Fprintln(os.Stderr, "start the GCS emulator:", err)
		os.Exit(1)
	}
	headCluster.Config.HeadEnv = map[string]string{}
	for _, kv := range storage.Env() {
		headCluster.Config.HeadEnv[kv[0]] = kv[1]
	}
	code := m.Run()
	storage.Stop()
	for name, c := range map[string]*raytest.Shared{"slice": sliceCluster, "head-only": headCluster} {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the shared %s local Ray cluster: %v\n", name, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

func mustSpec(spec string) sim.Spec {
	s, err := sim.ParseSpec(spec)
	if err != nil {
		panic(err)
	}
	return s
}

// requireClean fails the test unless the shared cluster holds no
// placement group that is not REMOVED and no Serve application: what an
// earlier test left behind would change what this one sees.
func requireClean(t *testing.T, client *ray.Client) {
	t.Helper()
	pgs, err := client.PlacementGroups(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pgs = slices.DeleteFunc(pgs, func(pg ray.PlacementGroupState) bool { return pg.State == ray.PlacementGroupRemoved })
	d, err := client.ServeApplications(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(pgs) > 0 || len(d.Applications) > 0 {
		t.Fatalf("the shared cluster is not clean: %d live placement groups %+v, Serve applications %v", len(pgs), pgs, slices.Sorted(maps.Keys(d.Applications)))
	}
}

// requireCleanHead is requireClean for headCluster, whose tests also start
// Serve and submit jobs: Serve must not be running (the test starts it on
// a port of its own) and every submitted job must have ended.
func requireCleanHead(t *testing.T, client *ray.Client) {
	t.Helper()
	requireClean(t, client)
	d, err := client.ServeApplications(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Running() {
		t.Fatalf("the shared cluster is not clean: Serve is still running (controller %s, HTTP options %+v)", d.ControllerInfo.ActorID, d.HTTPOptions)
	}
	// Serve's shutdown ends its controller only after its proxies, but a
	// DELETE that outlasts Ray's 30 s shutdown timeout returns earlier. A
	// proxy left alive would be taken over, with its old port, by the next
	// Serve: wait a minute at most for every Serve actor to end.
	var alive []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		actors, err := client.Actors(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		alive = alive[:0]
		for _, a := range actors {
			if a.RayNamespace == "serve" && a.State != "DEAD" {
				alive = append(alive, fmt.Sprintf("%s %s (%s)", a.ClassName, a.Name, a.State))
			}
		}
		if len(alive) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shared cluster is not clean: Serve actors still alive a minute after Serve stopped: %v", alive)
		}
	}
	jobs, err := client.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Type == "SUBMISSION" && !j.Status.Terminal() {
			t.Fatalf("the shared cluster is not clean: job %s (%s) is %s", j.SubmissionID, j.Entrypoint, j.Status)
		}
	}
}
