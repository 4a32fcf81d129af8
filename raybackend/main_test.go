package raybackend_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/internal/raycluster"
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

func TestMain(m *testing.M) {
	code := m.Run()
	if err := sliceCluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the shared local Ray cluster:", err)
		code = max(code, 1)
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
