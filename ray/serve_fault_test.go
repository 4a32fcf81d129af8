package ray_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// These tests inject faults a real dashboard cannot be made to produce on
// demand; TestServeLifecycle covers the same calls against real Ray.

// fakeServe answers the Serve REST resource from a script: GETs return
// docs in turn (the last one repeats), PUT and DELETE answers come from
// putStatus (in turn, then 200). It records every request.
type fakeServe struct {
	mu        sync.Mutex
	docs      []string
	getStatus []int // per GET, before docs are used
	putStatus []int
	reqs      []fakeReq
}

type fakeReq struct {
	method, body string
}

func (f *fakeServe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	f.reqs = append(f.reqs, fakeReq{r.Method, string(body)})
	if r.URL.Path != "/api/serve/applications/" {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if len(f.getStatus) > 0 {
			s := f.getStatus[0]
			f.getStatus = f.getStatus[1:]
			if s != http.StatusOK {
				http.Error(w, "Failed to get a response from the controller. The GCS may be down, please retry later: ...", s)
				return
			}
		}
		doc := f.docs[0]
		if len(f.docs) > 1 {
			f.docs = f.docs[1:]
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	case http.MethodPut, http.MethodDelete:
		if len(f.putStatus) > 0 {
			s := f.putStatus[0]
			f.putStatus = f.putStatus[1:]
			if s != http.StatusOK {
				http.Error(w, "Service Unavailable", s)
				return
			}
		}
	}
}

func (f *fakeServe) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.reqs...)
}

func fakeClient(t *testing.T, f *fakeServe) *ray.Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := ray.NewClient(srv.URL, ray.WithRetry(ray.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A running Serve with application "x", whose deployed config Ray reports
// with odd spacing and characters encoding/json would escape.
const docWithX = `{"controller_info": {"actor_id": "c1", "node_id": "n1"}, "proxy_location": "HeadOnly",
 "http_options": {"host": "127.0.0.9", "port": 8123, "keep_alive_timeout_s": 90, "request_timeout_s": null},
 "grpc_options": {"port": 9000, "grpc_servicer_functions": [], "enable_reflection": false},
 "proxies": {}, "target_capacity": 50,
 "applications": {"x": {"name": "x", "route_prefix": "/x", "docs_path": null, "status": "RUNNING", "message": "",
   "last_deployed_time_s": 1.5, "source": "declarative", "external_scaler_enabled": false,
   "deployed_app_config": {"name": "x", "route_prefix": "/x", "import_path": "m:app", "args": {"s": "<&>"}},
   "deployments": {}},
  "py": {"name": "py", "route_prefix": "/py", "docs_path": null, "status": "RUNNING", "message": "",
   "last_deployed_time_s": 1.0, "source": "imperative", "external_scaler_enabled": false, "deployed_app_config": null,
   "deployments": {}}}}`

const emptyDoc = `{"controller_info": {}, "proxies": {}, "applications": {}, "target_capacity": null}`

func TestServeApplicationsRetriesUnavailable(t *testing.T) {
	t.Parallel()
	f := &fakeServe{docs: []string{docWithX}, getStatus: []int{503}}
	d, err := fakeClient(t, f).ServeApplications(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (a 503, then the retry)", n)
	}
	if !d.Running() || d.Applications["x"].Status != ray.ServeAppRunning || *d.TargetCapacity != 50 {
		t.Errorf("details = %+v, want x RUNNING, target capacity 50", d)
	}
}

func TestDeployServeApplicationRereadsAfterFailedWrite(t *testing.T) {
	t.Parallel()
	f := &fakeServe{docs: []string{docWithX}, putStatus: []int{503}}
	app := "{\n  \"name\": \"y\",\n  \"route_prefix\": \"/y\", \"import_path\": \"m:y\", \"unknown_key\": \"<kept>\"\n}"
	if err := fakeClient(t, f).DeployServeApplication(t.Context(), json.RawMessage(app)); err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, r := range f.requests() {
		methods = append(methods, r.method)
	}
	// The failed PUT is not resent as is: the set is read again first.
	if diff := cmp.Diff([]string{"GET", "PUT", "GET", "PUT"}, methods); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	want := `{"proxy_location":"HeadOnly","http_options":{"host":"127.0.0.9","port":8123,"keep_alive_timeout_s":90},` +
		`"grpc_options":{"port":9000,"enable_reflection":false},"target_capacity":50,"applications":[` +
		`{"name": "x", "route_prefix": "/x", "import_path": "m:app", "args": {"s": "<&>"}},` + app + `]}`
	if got := f.requests()[3].body; got != want {
		t.Errorf("PUT body:\n got %s\nwant %s", got, want)
	}
}

func TestDeployServeApplicationsSendsApplicationsVerbatim(t *testing.T) {
	t.Parallel()
	f := &fakeServe{docs: []string{emptyDoc}}
	apps := []json.RawMessage{
		json.RawMessage("{\"name\":\"a\",\n \"import_path\": \"m:a\", \"args\": {\"html\": \"<b>&amp;</b>\"}}"),
		json.RawMessage(`  {"name": "b", "import_path": "m:b", "route_prefix": null}`),
	}
	err := fakeClient(t, f).DeployServeApplications(t.Context(), ray.ServeDeployConfig{Applications: apps})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"applications":[` + string(apps[0]) + "," + string(apps[1]) + `]}`
	if r := f.requests(); len(r) != 1 || r[0].method != "PUT" || r[0].body != want {
		t.Errorf("requests = %+v, want one PUT with body %s", r, want)
	}
}

func TestServeRefusesLocalPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, app, field string
	}{
		{"working_dir", `{"name": "a", "import_path": "m:a", "runtime_env": {"working_dir": "/home/me/app"}}`, "app.runtime_env.working_dir"},
		{"py_modules", `{"import_path": "m:a", "runtime_env": {"py_modules": ["gcs://_ray_pkg_0123456789abcdef.zip", "./lib"]}}`, "app.runtime_env.py_modules[1]"},
		{"deployment", `{"import_path": "m:a", "deployments": [{"name": "d"}, {"name": "e", "ray_actor_options": {"runtime_env": {"working_dir": "rel/dir"}}}]}`,
			"app.deployments[1].ray_actor_options.runtime_env.working_dir"},
		{"not an object", `["a"]`, "app"},
		{"empty name", `{"name": "", "import_path": "m:a"}`, "app.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeServe{docs: []string{emptyDoc}}
			err := fakeClient(t, f).DeployServeApplication(t.Context(), json.RawMessage(tt.app))
			if !errors.Is(err, ray.ErrInvalid) || !strings.Contains(err.Error(), tt.field+":") {
				t.Errorf("err = %v, want ErrInvalid naming %s", err, tt.field)
			}
			if strings.Contains(tt.field, "runtime_env") && !strings.Contains(err.Error(), "PrepareRuntimeEnv") {
				t.Errorf("err = %v, want it to point to PrepareRuntimeEnv", err)
			}
			if n := len(f.requests()); n != 0 {
				t.Errorf("%d requests sent for a refused config", n)
			}
		})
	}
}

// A typed config is sent as its own JSON, and refused on the same
// grounds as a raw one, before any request.
func TestDeployServeConfig(t *testing.T) {
	t.Parallel()
	app := &serveconfig.Application{Name: "y", RoutePrefix: json.RawMessage(`"/y"`), ImportPath: "m:y",
		Args: map[string]any{"s": "<&>"}, Deployments: []serveconfig.Deployment{{Name: "d", NumReplicas: serveconfig.ReplicaCount(2)}}}
	f := &fakeServe{docs: []string{emptyDoc}}
	if err := fakeClient(t, f).DeployServeConfig(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	raw, err := app.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"applications":[` + string(raw) + `]}`
	if r := f.requests(); len(r) != 2 || r[1].method != "PUT" || r[1].body != want {
		t.Errorf("requests = %+v, want a GET and a PUT with body %s", r, want)
	}

	local := func(mod func(a *serveconfig.Application)) *serveconfig.Application {
		a := *app
		a.Deployments = []serveconfig.Deployment{{Name: "d"}, {Name: "e"}}
		mod(&a)
		return &a
	}
	tests := []struct {
		name  string
		app   *serveconfig.Application
		field string
	}{
		{"working_dir", local(func(a *serveconfig.Application) { a.RuntimeEnv = &runtimeenv.RuntimeEnv{WorkingDir: "/home/me/app"} }), "app.runtime_env.working_dir"},
		{"py_modules", local(func(a *serveconfig.Application) {
			a.RuntimeEnv = &runtimeenv.RuntimeEnv{PyModules: []string{"gcs://_ray_pkg_0123456789abcdef.zip", "./lib"}}
		}), "app.runtime_env.py_modules[1]"},
		{"deployment", local(func(a *serveconfig.Application) {
			a.Deployments[1].RayActorOptions = &serveconfig.ActorOptions{RuntimeEnv: &runtimeenv.RuntimeEnv{WorkingDir: "rel/dir"}}
		}), "app.deployments[1].ray_actor_options.runtime_env.working_dir"},
		{"empty name", local(func(a *serveconfig.Application) { a.Name = "" }), "app.name"},
		{"no config", nil, "app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeServe{docs: []string{emptyDoc}}
			err := fakeClient(t, f).DeployServeConfig(t.Context(), tt.app)
			if !errors.Is(err, ray.ErrInvalid) || !strings.Contains(err.Error(), tt.field+":") {
				t.Errorf("err = %v, want ErrInvalid naming %s", err, tt.field)
			}
			if n := len(f.requests()); n != 0 {
				t.Errorf("%d requests sent for a refused config", n)
			}
		})
	}
}

func TestDeleteServeApplication(t *testing.T) {
	t.Parallel()
	onlyX := strings.Replace(docWithX, `"py": {"name": "py"`, `"zz": {"name": "zz"`, 1)
	onlyX = strings.Replace(onlyX, `"status": "RUNNING", "message": "",
   "last_deployed_time_s": 1.0`, `"status": "DELETING", "message": "",
   "last_deployed_time_s": 1.0`, 1)
	tests := []struct {
		name, doc, app string
		wantMethods    []string
		wantErr        error
	}{
		// x is the last live application (zz is being deleted): shut down.
		{"last one", onlyX, "x", []string{"GET", "DELETE"}, nil},
		// py, deployed from Python, keeps running: PUT an empty set.
		{"others imperative", docWithX, "x", []string{"GET", "PUT"}, nil},
		{"imperative", docWithX, "py", []string{"GET"}, ray.ErrConflict},
		{"unknown", docWithX, "nope", []string{"GET"}, ray.ErrNotFound},
		{"being deleted", onlyX, "zz", []string{"GET"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeServe{docs: []string{tt.doc}}
			err := fakeClient(t, f).DeleteServeApplication(t.Context(), tt.app)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			var methods []string
			for _, r := range f.requests() {
				methods = append(methods, r.method)
			}
			if diff := cmp.Diff(tt.wantMethods, methods); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tt.name == "others imperative" {
				want := `{"proxy_location":"HeadOnly","http_options":{"host":"127.0.0.9","port":8123,"keep_alive_timeout_s":90},` +
					`"grpc_options":{"port":9000,"enable_reflection":false},"target_capacity":50,"applications":[]}`
				if got := f.requests()[1].body; got != want {
					t.Errorf("PUT body:\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}

func TestWaitServeApplicationUnhealthy(t *testing.T) {
	t.Parallel()
	deploying := strings.Replace(docWithX, `"deployments": {}},
  "py"`, `"deployments": {"D": {"name": "D", "status": "UPDATING", "message": "", "replicas": []}}},
  "py"`, 1)
	deploying = strings.Replace(deploying, `"status": "RUNNING", "message": "",
   "last_deployed_time_s": 1.5`, `"status": "DEPLOYING", "message": "",
   "last_deployed_time_s": 1.5`, 1)
	unhealthy := strings.Replace(deploying, `"status": "UPDATING", "message": ""`,
		`"status": "UNHEALTHY", "status_trigger": "HEALTH_CHECK_FAILED", "message": "A replica's health check failed."`, 1)
	unhealthy = strings.Replace(unhealthy, `"status": "DEPLOYING", "message": ""`,
		`"status": "UNHEALTHY", "message": "The deployments ['D'] are UNHEALTHY."`, 1)
	f := &fakeServe{docs: []string{deploying, deploying, unhealthy}, getStatus: []int{200, 503}}
	var seen []ray.ServeApplicationStatus
	_, err := fakeClient(t, f).WaitServeApplication(t.Context(), "x", ray.WaitServeOptions{
		PollInterval: time.Millisecond,
		OnTransition: func(a ray.ApplicationDetails) { seen = append(seen, a.Status) },
	})
	var ae *ray.ServeApplicationError
	if !errors.Is(err, ray.ErrUnhealthy) || errors.Is(err, ray.ErrDeployFailed) || !errors.As(err, &ae) {
		t.Fatalf("err = %v, want a *ServeApplicationError matching ErrUnhealthy", err)
	}
	want := "The deployments ['D'] are UNHEALTHY.\ndeployment \"D\" is UNHEALTHY: A replica's health check failed."
	if ae.Message != want || ae.Details == nil || ae.Details.Deployments["D"].StatusTrigger != "HEALTH_CHECK_FAILED" {
		t.Errorf("error = %+v, want message %q and details", ae, want)
	}
	if diff := cmp.Diff([]ray.ServeApplicationStatus{ray.ServeAppDeploying, ray.ServeAppUnhealthy}, seen); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
}

// TestDeployServeApplicationConcurrent deploys applications from several
// goroutines against a dashboard that keeps the last PUT: the
// read-modify-write cycles of one process are serialised, so none is lost.
func TestDeployServeApplicationConcurrent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&serveDashboard{})
	t.Cleanup(srv.Close)
	c, err := ray.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			app := fmt.Sprintf(`{"name": "app%d", "route_prefix": "/%d", "import_path": "m:app"}`, i, i)
			errs[i] = c.DeployServeApplication(t.Context(), json.RawMessage(app))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	d, err := c.ServeApplications(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(d.Applications); got != n {
		t.Errorf("%d applications after %d concurrent deploys, want %d: %v", got, n, n, d.Applications)
	}
}

// TestDeployServeApplicationReadFails: when the read fails after its own
// retries, nothing is written and the cycle is not repeated.
func TestDeployServeApplicationReadFails(t *testing.T) {
	t.Parallel()
	f := &fakeServe{docs: []string{docWithX}, getStatus: []int{503, 503, 503, 503}}
	err := fakeClient(t, f).DeployServeApplication(t.Context(), json.RawMessage(`{"name": "y", "import_path": "m:y"}`))
	if !errors.Is(err, ray.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	var methods []string
	for _, r := range f.requests() {
		methods = append(methods, r.method)
	}
	if diff := cmp.Diff([]string{"GET", "GET", "GET"}, methods); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
