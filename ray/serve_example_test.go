package ray_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/raytpu/raytpu/ray"
)

// serveDashboard answers /api/serve/applications/ the way Ray 2.60's
// dashboard does, for the example only: a PUT replaces the declarative set
// and answers an empty 200, and each GET moves a DEPLOYING application to
// RUNNING.
type serveDashboard struct {
	mu   sync.Mutex
	apps map[string]map[string]any
}

func (s *serveDashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		var cfg struct {
			Applications []json.RawMessage `json:"applications"`
		}
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		apps := map[string]map[string]any{}
		for _, raw := range cfg.Applications {
			var a struct {
				Name        string `json:"name"`
				RoutePrefix string `json:"route_prefix"`
			}
			_ = json.Unmarshal(raw, &a)
			status := "DEPLOYING"
			if old, ok := s.apps[a.Name]; ok {
				status = old["status"].(string)
			}
			apps[a.Name] = map[string]any{"name": a.Name, "route_prefix": a.RoutePrefix, "docs_path": nil,
				"status": status, "message": "", "last_deployed_time_s": 1.7e9, "source": "declarative",
				"deployed_app_config": raw, "deployments": map[string]any{}, "external_scaler_enabled": false}
		}
		s.apps = apps
	case http.MethodGet:
		doc := map[string]any{"controller_info": map[string]any{}, "proxies": map[string]any{}, "applications": s.apps}
		if len(s.apps) > 0 {
			doc["controller_info"] = map[string]any{"actor_id": "5e1f0c", "node_id": "a3d2"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
		for _, a := range s.apps {
			a["status"] = "RUNNING"
		}
	}
}

// Deploy one Serve application beside whatever else runs, and wait until
// it serves. The working_dir is a package uploaded beforehand with
// PrepareRuntimeEnv. (The dashboard here is an in-memory stand-in that
// answers as Ray does.)
func ExampleClient_DeployServeApplication() {
	srv := httptest.NewServer(&serveDashboard{})
	defer srv.Close()
	c, err := ray.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	app := json.RawMessage(`{
  "name": "hello",
  "route_prefix": "/hello",
  "import_path": "hello:app",
  "runtime_env": {"working_dir": "gcs://_ray_pkg_3f2a9c01d4e5b677.zip"}
}`)
	if err := c.DeployServeApplication(ctx, app); err != nil {
		log.Fatal(err)
	}
	a, err := c.WaitServeApplication(ctx, "hello", ray.WaitServeOptions{
		PollInterval: 10 * time.Millisecond,
		OnTransition: func(a ray.ApplicationDetails) { fmt.Println("hello is", a.Status) },
	})
	if err != nil {
		log.Fatal(err) // errors.Is(err, ray.ErrDeployFailed) when its code fails
	}
	fmt.Println("serving at", *a.RoutePrefix)
	// Output:
	// hello is DEPLOYING
	// hello is RUNNING
	// serving at /hello
}
