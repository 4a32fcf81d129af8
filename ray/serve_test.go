package ray_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// serveModule is the code of the test applications, shipped as a
// working_dir package.
const serveModule = `from ray import serve


@serve.deployment
class Echo:
    def __init__(self, greeting):
        self.greeting = greeting

    async def __call__(self, request):
        rid = serve.get_replica_context().replica_id.unique_id
        return f"{self.greeting} from {rid}"


def build(args):
    return Echo.bind(args.get("greeting", "hello"))


@serve.deployment
class Broken:
    def __init__(self):
        raise RuntimeError("raytpu-broken-constructor")


broken = Broken.bind()
`

// echoApp is an application config as a front end would build it: raw
// JSON, indented, sent byte for byte.
func echoApp(name, route, workingDir, greeting string, extraActorOptions string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{
  "name": %q,
  "route_prefix": %q,
  "import_path": "raytpu_serve_app:build",
  "args": {"greeting": %q},
  "runtime_env": {"working_dir": %q},
  "deployments": [{"name": "Echo", "ray_actor_options": {"num_cpus": 0.1%s}}]
}`, name, route, greeting, workingDir, extraActorOptions))
}

// TestServeLifecycle drives Ray Serve on the shared local cluster through
// the REST API: deploy, redeploy unchanged, add a second application,
// delete the first, a failing constructor, a replica that cannot be
// scheduled, and the shutdown that deleting the last application causes.
func TestServeLifecycle(t *testing.T) {
	cl := realCluster(t)
	c := realClient(t)
	ctx := t.Context()
	t.Cleanup(func() {
		// Leave the shared cluster without Serve, whatever failed.
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.ShutdownServe(sctx); err != nil {
			t.Errorf("ShutdownServe: %v", err)
		}
	})
	step := stepTimer(t)

	// The application's code ships as a package.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "raytpu_serve_app.py"), []byte(serveModule), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := c.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{WorkingDir: dir}, ray.PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uri := env.WorkingDir
	if !strings.HasPrefix(uri, "gcs://_ray_pkg_") {
		t.Fatalf("PrepareRuntimeEnv working_dir = %q, want a gcs:// package URI", uri)
	}
	step("upload working_dir")

	// Start Serve on the head's loopback address at a free port.
	headIP, ok := cl.NodeIP("head")
	if !ok {
		t.Fatal("no head node IP")
	}
	port := serveFreePort(t, headIP)
	appA := echoApp("a", "/a", uri, "hi", "")
	err = c.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: headIP, Port: port},
		Applications:  []json.RawMessage{appA},
	})
	if err != nil {
		t.Fatal(err)
	}
	step("PUT first config")
	var seen []ray.ServeApplicationStatus
	a, err := c.WaitServeApplication(ctx, "a", ray.WaitServeOptions{
		PollInterval: 500 * time.Millisecond,
		OnTransition: func(a ray.ApplicationDetails) { seen = append(seen, a.Status) },
	})
	if err != nil {
		t.Fatalf("WaitServeApplication(a): %v", err)
	}
	step("application a RUNNING")
	if len(seen) == 0 || seen[len(seen)-1] != ray.ServeAppRunning {
		t.Errorf("transitions = %v, want them to end with RUNNING", seen)
	}
	t.Logf("transitions of a: %v", seen)
	replicasA := replicaIDs(t, a, "Echo", 1)
	if a.Source != ray.ServeSourceDeclarative || a.RoutePrefix == nil || *a.RoutePrefix != "/a" {
		t.Errorf("a: source %q, route_prefix %v; want declarative at /a", a.Source, a.RoutePrefix)
	}
	checkDeployedConfig(t, a, appA)

	d, err := c.ServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Running() || d.HTTPOptions == nil || d.HTTPOptions.Port != port || d.HTTPOptions.Host != headIP || d.ProxyLocation != ray.ProxyHeadOnly {
		t.Errorf("Serve: running %v, proxy %q, http_options %+v; want HeadOnly on %s:%d", d.Running(), d.ProxyLocation, d.HTTPOptions, headIP, port)
	}
	proxy := fmt.Sprintf("http://%s:%d", headIP, port)
	if got, want := callServe(t, proxy+"/a"), "hi from "+replicasA[0]; got != want {
		t.Errorf("GET /a = %q, want %q", got, want)
	}
	step("HTTP call through the proxy")

	// Deploying the same application again changes nothing: the replica
	// stays (Ray shows DEPLOYING for one controller loop).
	if err := c.DeployServeApplication(ctx, appA); err != nil {
		t.Fatal(err)
	}
	seen = nil
	a, err = c.WaitServeApplication(ctx, "a", ray.WaitServeOptions{
		PollInterval: 200 * time.Millisecond,
		OnTransition: func(a ray.ApplicationDetails) { seen = append(seen, a.Status) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("transitions of a after redeploying it unchanged: %v", seen)
	if got := replicaIDs(t, a, "Echo", 1); !slices.Equal(got, replicasA) {
		t.Errorf("replicas of a after redeploying the same config = %v, want %v unchanged", got, replicasA)
	}
	step("redeploy a unchanged")

	// A second application joins without disturbing the first.
	appB := echoApp("b", "/b", uri, "bonjour", "")
	if err := c.DeployServeApplication(ctx, appB); err != nil {
		t.Fatal(err)
	}
	b, err := c.WaitServeApplication(ctx, "b", ray.WaitServeOptions{PollInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	replicasB := replicaIDs(t, b, "Echo", 1)
	d, err = c.ServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := replicaIDs(t, d.Applications["a"], "Echo", 1); d.Applications["a"].Status != ray.ServeAppRunning || !slices.Equal(got, replicasA) {
		t.Errorf("a after deploying b: %s with replicas %v, want RUNNING with %v", d.Applications["a"].Status, got, replicasA)
	}
	step("deploy b beside a")

	// Deleting a leaves b running with the same replica. Ray re-applies
	// b's unchanged config: b shows DEPLOYING until the controller's next
	// loop finds nothing to change, and its replica is never replaced.
	if err := c.DeleteServeApplication(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	var bStatuses []ray.ServeApplicationStatus
	for {
		d, err = c.ServeApplications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := d.Applications["b"]
		if len(bStatuses) == 0 || bStatuses[len(bStatuses)-1] != b.Status {
			bStatuses = append(bStatuses, b.Status)
		}
		got := replicaIDs(t, b, "Echo", 1)
		if (b.Status != ray.ServeAppRunning && b.Status != ray.ServeAppDeploying) || !slices.Equal(got, replicasB) {
			t.Fatalf("b while a is deleted: %s with replicas %v, want RUNNING (or DEPLOYING for a moment) with %v", b.Status, got, replicasB)
		}
		if _, ok := d.Applications["a"]; !ok && b.Status == ray.ServeAppRunning {
			break
		}
		serveSleep(t, 200*time.Millisecond)
	}
	t.Logf("statuses of b while a is deleted: %v", bStatuses)
	if got, want := callServe(t, proxy+"/b"), "bonjour from "+replicasB[0]; got != want {
		t.Errorf("GET /b = %q, want %q", got, want)
	}
	if err := c.DeleteServeApplication(ctx, "a"); !errors.Is(err, ray.ErrNotFound) {
		t.Errorf("deleting a again: %v, want ErrNotFound", err)
	}
	step("delete a, b keeps running")

	// A constructor that raises: DEPLOY_FAILED with Ray's message.
	broken := json.RawMessage(fmt.Sprintf(`{"name": "c", "route_prefix": "/c", "import_path": "raytpu_serve_app:broken",
 "runtime_env": {"working_dir": %q}, "deployments": [{"name": "Broken", "ray_actor_options": {"num_cpus": 0.1}}]}`, uri))
	if err := c.DeployServeApplication(ctx, broken); err != nil {
		t.Fatal(err)
	}
	_, err = c.WaitServeApplication(ctx, "c", ray.WaitServeOptions{PollInterval: 500 * time.Millisecond})
	var ae *ray.ServeApplicationError
	if !errors.Is(err, ray.ErrDeployFailed) || !errors.As(err, &ae) {
		t.Fatalf("waiting for the broken application: %v, want a *ServeApplicationError matching ErrDeployFailed", err)
	}
	if ae.Name != "c" || ae.Status != ray.ServeAppDeployFailed || !strings.Contains(ae.Message, "RuntimeError: raytpu-broken-constructor") || ae.Details == nil {
		t.Errorf("error = %+v, want c DEPLOY_FAILED with the constructor's RuntimeError and details", ae)
	}
	step("failing constructor gives ErrDeployFailed")

	// A replica that no node can host keeps the application DEPLOYING; a
	// wait cut short by its context says so, with the details.
	pending := echoApp("p", "/p", uri, "never", `, "resources": {"raytpu_no_such_resource": 1}`)
	if err := c.DeployServeApplication(ctx, pending); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	_, err = c.WaitServeApplication(wctx, "p", ray.WaitServeOptions{PollInterval: 500 * time.Millisecond})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ae) || ae.Status != ray.ServeAppDeploying || ae.Details == nil {
		t.Fatalf("waiting for an unschedulable application: %v, want a DEPLOYING *ServeApplicationError matching context.DeadlineExceeded", err)
	}
	if dep, ok := ae.Details.Deployments["Echo"]; ok && len(dep.Replicas) > 0 && dep.Replicas[0].State != ray.ServeReplicaStarting {
		t.Errorf("unschedulable replica state %s, want STARTING", dep.Replicas[0].State)
	}
	step("unschedulable replica: deadline error with details")

	for _, name := range []string{"c", "p"} {
		if err := c.DeleteServeApplication(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	b, err = c.WaitServeApplication(ctx, "b", ray.WaitServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := replicaIDs(t, b, "Echo", 1); !slices.Equal(got, replicasB) {
		t.Errorf("b after deploying and deleting c and p: replicas %v, want %v", got, replicasB)
	}
	step("delete c and p, b untouched")

	// Deleting the last application shuts Serve down.
	if err := c.DeleteServeApplication(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	d, err = c.ServeApplications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Running() || len(d.Applications) != 0 {
		t.Errorf("after deleting the last application: running %v, applications %v; want Serve shut down", d.Running(), d.Applications)
	}
	if _, err := c.WaitServeApplication(ctx, "b", ray.WaitServeOptions{}); !errors.Is(err, ray.ErrNotFound) {
		t.Errorf("waiting for a deleted application: %v, want ErrNotFound", err)
	}
	step("delete the last application: Serve shut down")
}

// stepTimer logs the time each step took.
func stepTimer(t *testing.T) func(string) {
	start, last := time.Now(), time.Now()
	return func(what string) {
		t.Logf("%-50s %6.1fs (total %5.1fs)", what, time.Since(last).Seconds(), time.Since(start).Seconds())
		last = time.Now()
	}
}

// replicaIDs returns the ids of dep's replicas, checking their count.
func replicaIDs(t *testing.T, a ray.ApplicationDetails, dep string, want int) []string {
	t.Helper()
	var ids []string
	for _, r := range a.Deployments[dep].Replicas {
		if r.ActorID == "" || r.NodeID == "" || r.ActorName == "" {
			t.Errorf("replica %s of %s/%s lacks actor or node ids: %+v", r.ReplicaID, a.Name, dep, r)
		}
		ids = append(ids, r.ReplicaID)
	}
	if len(ids) != want {
		t.Errorf("%s/%s has replicas %v, want %d", a.Name, dep, ids, want)
	}
	slices.Sort(ids)
	return ids
}

// checkDeployedConfig compares Ray's deployed_app_config with what was sent.
func checkDeployedConfig(t *testing.T, a ray.ApplicationDetails, sent json.RawMessage) {
	t.Helper()
	var got, want any
	if err := json.Unmarshal(a.DeployedAppConfig, &got); err != nil {
		t.Fatalf("deployed_app_config %s: %v", a.DeployedAppConfig, err)
	}
	if err := json.Unmarshal(sent, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployed_app_config differs from the config sent (-sent +Ray):\n%s", diff)
	}
}

// callServe GETs url through the Serve proxy, waiting for the route to
// appear (the proxy learns routes shortly after the application runs).
func callServe(t *testing.T, url string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(body)
			}
			err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		serveSleep(t, 500*time.Millisecond)
	}
}

func serveSleep(t *testing.T, d time.Duration) {
	select {
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(d):
	}
}

// freePort returns a TCP port free on ip.
func serveFreePort(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestServeInvalidConfig checks that Ray's rejection of a config (HTTP
// 400, before Serve starts) is ErrInvalid with pydantic's message kept.
func TestServeInvalidConfig(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	tests := []struct {
		name string
		apps []json.RawMessage
		want string
	}{
		{"duplicate names", []json.RawMessage{
			json.RawMessage(`{"name": "dup", "route_prefix": "/1", "import_path": "m:a"}`),
			json.RawMessage(`{"name": "dup", "route_prefix": "/2", "import_path": "m:a"}`),
		}, `Found multiple configs for application "dup". Please remove all duplicates.`},
		{"port inside an application", []json.RawMessage{
			json.RawMessage(`{"name": "p", "import_path": "m:a", "port": 9001}`),
		}, "Port 9001 is set in the config for application `p`. Please remove it and set port in the top level deploy config only."},
		{"bad import path", []json.RawMessage{
			json.RawMessage(`{"name": "i", "import_path": "app"}`),
		}, `Got invalid import path "app".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := c.DeployServeApplications(t.Context(), ray.ServeDeployConfig{Applications: tt.apps})
			var ae *ray.APIError
			if !errors.Is(err, ray.ErrInvalid) || !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Fatalf("err = %v, want an HTTP 400 *APIError matching ErrInvalid", err)
			}
			t.Logf("%v", err)
			if !strings.Contains(ae.Message, tt.want) || strings.Contains(ae.Message, "\n") {
				t.Errorf("message %q, want one line containing %q", ae.Message, tt.want)
			}
		})
	}
}
