package raycluster_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/raytpu/raytpu/internal/raycluster"
)

// TestJobsProbe tells Ray's Jobs API from a Prometheus exporter of Ray,
// which answers 200 to any GET and 405 to a POST (issue 51).
func TestJobsProbe(t *testing.T) {
	t.Parallel()
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "OPTIONS,GET")
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, "# HTTP 405 Method Not Allowed: POST; use OPTIONS or GET\n")
			return
		}
		io.WriteString(w, "# HELP ray_dashboard_api_requests_count_requests_total ...\n")
	}))
	t.Cleanup(prom.Close)
	// What Ray 2.60's JobHead answers (checked against the real one by
	// every cluster start).
	jobs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/version":
			io.WriteString(w, `{"version": "4", "ray_version": "2.60.0", "ray_commit": "x", "session_name": "s"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/api/jobs/":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "Traceback (most recent call last):\n...\nTypeError: JobSubmitRequest.__init__() missing 1 required positional argument: 'entrypoint'\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(jobs.Close)
	ctx := t.Context()
	if err := raycluster.ProbeVersion(ctx, prom.URL); err == nil {
		t.Error("the version check took a metrics exporter for the dashboard")
	}
	if err := raycluster.ProbeJobsAPI(ctx, prom.URL); err == nil {
		t.Error("the Jobs API probe took a metrics exporter for the dashboard")
	}
	if err := raycluster.ProbeVersion(ctx, jobs.URL); err != nil {
		t.Errorf("version check of a Ray dashboard: %v", err)
	}
	if err := raycluster.ProbeJobsAPI(ctx, jobs.URL); err != nil {
		t.Errorf("Jobs API probe of a Ray dashboard: %v", err)
	}
}
