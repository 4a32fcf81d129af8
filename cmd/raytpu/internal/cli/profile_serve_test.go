package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// TestProfileServeReplicaOnRealRay deploys a Serve application whose
// replica owns the posing v4 2x2x2 slice with Deployment.Profiler set, and
// captures 1 s of each of the replica's two hosts with `raytpu profile
// --app --deployment --replica --host`: the hosts' servers are found in
// the replica's output through the dashboard's log API, and each trace
// holds the jitted step every host runs.
func TestProfileServeReplicaOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	ctx := t.Context()
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	startServe(t, c, client)
	app := serve.Application{
		Name: "profiled", RoutePrefix: "/profiled", ImportPath: "prof_serve:app",
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "testdata/profile", EnvVars: map[string]string{"JAX_PLATFORMS": "cpu"}},
		Deployments: []serve.Deployment{{
			Name: "Busy", NumReplicas: serveconfig.ReplicaCount(1),
			RayActorOptions:   &serve.RayActorOptions{NumCPUs: new(0.0)},
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", HeadReservationTimeout: 60 * time.Second},
			Profiler:          &serveconfig.ProfilerConfig{},
		}},
	}
	b, err := raybackend.New(client, raybackend.WithPollInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	if _, err := app.Run(wctx, b, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}

	logdir := t.TempDir()
	const step = "PjitFunction(served_step)"
	for _, host := range []int{0, 1} {
		var stdout, stderr bytes.Buffer
		args := []string{"profile", "--address", c.DashboardURL, "--app", "profiled", "--deployment", "Busy", "--replica", "0", "--host", strconv.Itoa(host), "--duration", "1s", "-o", logdir, "--run", "serve"}
		if code := cli.Main(ctx, args, &stdout, &stderr); code != cli.ExitOK {
			t.Fatalf("raytpu profile --host %d = %d\nstdout:\n%s\nstderr:\n%s", host, code, stdout.String(), stderr.String())
		}
		t.Logf("raytpu profile --host %d:\n%s", host, stdout.String())
		files, _ := filepath.Glob(filepath.Join(logdir, "plugins", "profile", "serve", fmt.Sprintf("profiled-Busy-*-host-%d.xplane.pb", host)))
		if len(files) != 1 {
			t.Fatalf("trace files of host %d: %v, want one", host, files)
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		sum, err := profiler.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		if p := sum.Plane("/host:CPU"); p == nil || p.Count(step) == 0 {
			t.Errorf("host %d: no %q events on a /host:CPU plane: %+v", host, step, sum.Planes)
		}
	}

	// A host the slice does not have: the error lists the hosts there are.
	var stdout, stderr bytes.Buffer
	args := []string{"profile", "--address", c.DashboardURL, "--app", "profiled", "--deployment", "Busy", "--host", "2", "-o", logdir}
	if code := cli.Main(ctx, args, &stdout, &stderr); code != cli.ExitInvalid || !strings.Contains(stderr.String(), "0, 1") {
		t.Errorf("raytpu profile --host 2 = %d, stderr %q; want exit %d listing hosts 0, 1", code, stderr.String(), cli.ExitInvalid)
	}
}

// startServe starts Serve on c with its HTTP proxy on the head's address
// at a free port (Ray's default, 8000, may be another cluster's on this
// machine) and shuts all of Serve down when the test ends.
func startServe(t *testing.T, c *raycluster.Cluster, client *ray.Client) {
	t.Helper()
	u, err := url.Parse(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := client.DeployServeApplications(t.Context(), ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: u.Hostname(), Port: port},
		Applications:  []json.RawMessage{},
	}); err != nil {
		t.Fatalf("starting Serve: %v", err)
	}
	t.Cleanup(func() {
		if err := client.ShutdownServe(context.Background()); err != nil {
			t.Errorf("shutting Serve down: %v", err)
		}
	})
}
