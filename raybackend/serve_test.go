package raybackend_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

const helloModule = `from ray import serve


@serve.deployment
class Hello:
    def __call__(self, request):
        return "hello from raytpu"


@serve.deployment
class Broken:
    def __init__(self):
        raise RuntimeError("raytpu-broken-constructor")


app = Hello.bind()
broken = Broken.bind()
`

// serveOnRealRay: a Serve application compiled by package serve, whose
// code is a local directory, deployed through the backend contract on a
// real cluster; the topology case and a failing constructor as typed
// errors; delete by name.
func serveOnRealRay(t *testing.T, cluster *raycluster.Cluster, client *ray.Client, b *raybackend.Backend) {
	proxy := raytest.StartServe(t, client, cluster.DashboardURL)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte(helloModule), 0o644); err != nil {
		t.Fatal(err)
	}
	hello := serve.Application{
		Name: "hello", RoutePrefix: "/hello", ImportPath: "hello:app",
		RuntimeEnv:  runtimeenv.RuntimeEnv{WorkingDir: dir},
		Deployments: []serve.Deployment{{Name: "Hello", NumReplicas: serveconfig.ReplicaCount(1)}},
	}
	var seen []backend.ServiceState
	st, err := hello.Run(t.Context(), b, &backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) { seen = append(seen, s.State) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !st.Ran || st.State != backend.ServiceRunning || len(st.Deployments) != 1 || st.Deployments[0].Replicas != 1 {
		t.Errorf("status = %+v, want RUNNING with Hello at 1 of 1 replica", st)
	}
	if len(seen) == 0 || seen[len(seen)-1] != backend.ServiceRunning {
		t.Errorf("states seen = %v, want them to end RUNNING", seen)
	}
	resp, err := http.Get(proxy + "/hello")
	if err != nil {
		d, derr := client.ServeApplications(t.Context())
		t.Fatalf("%v\nServe's HTTP options %+v, proxies %+v (%v)", err, d.HTTPOptions, d.Proxies, derr)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello from raytpu" {
		t.Errorf("GET /hello = %d %q, want 200 \"hello from raytpu\"", resp.StatusCode, body)
	}

	// A slice reservation without the plan's slice groups (a hand-edited
	// plan) is refused before anything is sent.
	tpuApp := serve.Application{Name: "llm", ImportPath: "hello:app", Deployments: []serve.Deployment{{
		Name: "Hello", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
	}}}
	plan, err := tpuApp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	plan.Slices = nil
	if _, err := b.Deploy(t.Context(), plan); !errors.Is(err, ray.ErrInvalid) || !errors.Is(err, backend.ErrInvalidPlan) {
		t.Errorf("Deploy of a reservation without slice groups = %v, want backend.ErrInvalidPlan and ray.ErrInvalid", err)
	}
	if _, err := b.Status(t.Context(), "llm"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Status(llm) = %v, want backend.ErrNotFound: nothing may have been deployed", err)
	}

	broken := serve.Application{
		Name: "broken", RoutePrefix: "/broken", ImportPath: "hello:broken",
		RuntimeEnv:  runtimeenv.RuntimeEnv{WorkingDir: dir},
		Deployments: []serve.Deployment{{Name: "Broken", NumReplicas: serveconfig.ReplicaCount(1)}},
	}
	_, err = broken.Run(t.Context(), b, nil)
	var se *backend.ServiceError
	if !errors.As(err, &se) || !errors.Is(err, backend.ErrDeployFailed) || !strings.Contains(se.Status.Message, "raytpu-broken-constructor") {
		t.Errorf("Run(broken) = %v, want a *backend.ServiceError matching ErrDeployFailed with the constructor's message", err)
	}

	// hello kept running through all of it; delete both by name.
	if st, err := b.Status(t.Context(), "hello"); err != nil || st.State != backend.ServiceRunning {
		t.Errorf("Status(hello) = %+v, %v; want RUNNING", st, err)
	}
	for _, name := range []string{"broken", "hello"} {
		if err := serve.Delete(t.Context(), b, name); err != nil {
			t.Fatalf("Delete(%s): %v", name, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := b.Status(t.Context(), "hello")
		if errors.Is(err, backend.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hello still there a minute after Delete: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := serve.Delete(t.Context(), b, "hello"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second Delete(hello) = %v, want backend.ErrNotFound", err)
	}
}
