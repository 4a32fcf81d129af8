package ray_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/ray"
)

// TestSubmitWhileDashboardStarts reproduces issue 51 beside the real
// dashboard: concurrent submits with fixed submission ids reach an
// address that answers POST /api/jobs/ as Ray's Prometheus exporters do
// (HTTP 405, "use OPTIONS or GET") for two seconds, then passes every
// request to the real dashboard. Every submit must succeed, and every job
// must exist once on the real server.
func TestSubmitWhileDashboardStarts(t *testing.T) {
	t.Parallel()
	direct := realClient(t)
	target, err := url.Parse(realCluster(t).DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	ready := time.Now().Add(2 * time.Second)
	var mu sync.Mutex
	refused := 0
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/jobs/" && time.Now().Before(ready) {
			mu.Lock()
			refused++
			mu.Unlock()
			prometheus405(w)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	var log syncbuf.Buffer
	c, err := ray.NewClient(front.URL, ray.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprint(time.Now().UnixNano())
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.SubmitJob(t.Context(), ray.JobSubmission{
				Entrypoint:   fmt.Sprintf("echo race %d", i),
				SubmissionID: fmt.Sprintf("raytpu_race_%s_%d", run, i),
				Metadata:     map[string]string{"raytpu-race-run": run},
			})
		})
	}
	wg.Wait()
	t.Logf("%d submits took %v; %d POSTs answered 405", n, time.Since(start), refused)
	for i, err := range errs {
		if err != nil {
			t.Errorf("submit %d: %v", i, err)
		}
	}
	if refused < n {
		t.Errorf("only %d POSTs were answered 405: the race was not reproduced", refused)
	}
	if !strings.Contains(log.String(), "waiting for it to start") {
		t.Errorf("no progress said the client waited for the dashboard:\n%s", log.String())
	}
	jobs, err := direct.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		if j.Metadata["raytpu-race-run"] == run {
			got = append(got, j.SubmissionID)
		}
	}
	slices.Sort(got)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("raytpu_race_%s_%d", run, i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs on the server: %v, want %v", got, want)
	}
	for _, id := range want {
		if _, err := direct.WaitJob(t.Context(), id, ray.WaitOptions{PollInterval: 200 * time.Millisecond}); err != nil {
			t.Errorf("WaitJob %s: %v", id, err)
		}
	}
}

// TestSubmitToMetricsPort submits to the real head's metrics export port,
// a Prometheus exporter of Ray: it answers exactly what issue 51 saw
// ("HTTP 405 ... use OPTIONS or GET"), and the client ends the wait at
// StartupWait with an error that names the address and says it is a
// metrics exporter's.
func TestSubmitToMetricsPort(t *testing.T) {
	t.Parallel()
	addr, ok := realCluster(t).MetricsAddr("head")
	if !ok {
		t.Fatal("the cluster has no metrics address for its head")
	}
	const wait = 2 * time.Second
	c, err := ray.NewClient("http://"+addr, ray.WithRetry(ray.RetryPolicy{StartupWait: wait}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo never"})
	took := time.Since(start)
	var ae *ray.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusMethodNotAllowed || !strings.Contains(ae.Body, "use OPTIONS or GET") {
		t.Fatalf("SubmitJob to %s: %v; want the Prometheus exporter's HTTP 405", addr, err)
	}
	if !errors.Is(err, ray.ErrDashboardNotServing) || !strings.Contains(err.Error(), "Prometheus metrics exporter") {
		t.Errorf("error %q does not say the address is a metrics exporter's", err)
	}
	if took > wait+time.Second {
		t.Errorf("took %v, want at most %v", took, wait+time.Second)
	}
	t.Logf("answer: %s", ae.Body)
}
