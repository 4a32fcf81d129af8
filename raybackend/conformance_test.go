package raybackend_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// The Ray backend passes the backend contract's conformance suite on a
// real local Ray cluster, the head-only headCluster it shares with
// TestRunOnRealRay (the shared slice cluster's tests require it free of
// applications while they run): the suite's job plans run as Ray jobs,
// and its applications are the hello module, one route per application,
// served by a proxy on a free port.
func TestConformanceOnRealRay(t *testing.T) {
	cluster := headCluster.Get(t)
	client, err := ray.NewClient(cluster.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	requireCleanHead(t, client)
	raytest.StartServe(t, client, cluster.DashboardURL)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte(helloModule), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := raybackend.New(client, raybackend.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Run(t, func(t *testing.T) backendtest.Backend {
		return backendtest.Backend{
			Name: raybackend.Name, Runner: b, Server: b, KeepsRuns: true, Patience: 3 * time.Minute,
			AppPlan: func(name string) *placement.Plan {
				p, err := serve.Application{
					Name: name, RoutePrefix: "/" + name, ImportPath: "hello:app",
					RuntimeEnv:  runtimeenv.RuntimeEnv{WorkingDir: dir},
					Deployments: []serve.Deployment{{Name: "Hello", NumReplicas: serveconfig.ReplicaCount(1)}},
				}.Compile()
				if err != nil {
					t.Fatal(err)
				}
				return p
			},
		}
	})
}
