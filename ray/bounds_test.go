package ray_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/silentserver"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/ray"
)

// TestNeverAnsweringServer points the client at a server that accepts
// connections and never answers: every read behind job status, job list,
// serve status and top (and the other calls) ends within the request
// timeout, once, not once per attempt, with an error matching
// ErrUnreachable.
func TestNeverAnsweringServer(t *testing.T) {
	t.Parallel()
	s := silentserver.Start(t)
	const timeout = 400 * time.Millisecond
	c, err := ray.NewClient(s.URL, ray.WithRequestTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		// rounds is how many request timeouts the call may use: a
		// submission reads the job back once after a timed-out POST.
		rounds int
		call   func(ctx context.Context) error
	}{
		{"job status", 1, func(ctx context.Context) error { _, err := c.GetJob(ctx, "raytpu_x"); return err }},
		{"job list", 1, func(ctx context.Context) error { _, err := c.ListJobs(ctx); return err }},
		{"job logs", 1, func(ctx context.Context) error { _, err := c.JobLogs(ctx, "raytpu_x"); return err }},
		{"job stop", 1, func(ctx context.Context) error { _, err := c.StopJob(ctx, "raytpu_x"); return err }},
		{"job delete", 1, func(ctx context.Context) error { _, err := c.DeleteJob(ctx, "raytpu_x"); return err }},
		{"job submit", 2, func(ctx context.Context) error {
			_, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "echo hi"})
			return err
		}},
		{"job wait", 1, func(ctx context.Context) error { _, err := c.WaitJob(ctx, "raytpu_x", ray.WaitOptions{}); return err }},
		{"job tail", 1, func(ctx context.Context) error {
			for _, err := range c.TailJobLogs(ctx, "raytpu_x") {
				return err
			}
			return nil
		}},
		{"serve status", 1, func(ctx context.Context) error { _, err := c.ServeApplications(ctx); return err }},
		// A deploy starts Serve's controller inside the request: it
		// waits ten timeouts.
		{"serve deploy", 10, func(ctx context.Context) error {
			return c.DeployServeApplications(ctx, ray.ServeDeployConfig{Applications: []json.RawMessage{}})
		}},
		{"top: nodes", 1, func(ctx context.Context) error { _, err := c.Nodes(ctx); return err }},
		{"cluster status", 1, func(ctx context.Context) error { _, err := c.ClusterStatus(ctx); return err }},
		{"version", 1, func(ctx context.Context) error { _, err := c.Version(ctx); return err }},
		{"package exists", 1, func(ctx context.Context) error {
			_, err := c.PackageExists(ctx, "gcs://_ray_pkg_0123456789abcdef.zip")
			return err
		}},
		{"actors", 1, func(ctx context.Context) error { _, err := c.Actors(ctx); return err }},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			err := tt.call(t.Context())
			took := time.Since(start)
			if !errors.Is(err, ray.ErrUnreachable) {
				t.Errorf("error %v, want one matching ErrUnreachable", err)
			}
			if max := time.Duration(tt.rounds)*timeout + 5*time.Second; took > max {
				t.Errorf("took %v, want at most %v", took, max)
			}
			if err != nil && !strings.Contains(err.Error(), "request timeout") {
				t.Errorf("error %q does not say the request timeout ran out", err)
			}
		})
	}
}

// TestDefaultRequestTimeout checks the documented default and the
// option's input checks.
func TestDefaultRequestTimeout(t *testing.T) {
	t.Parallel()
	if ray.DefaultRequestTimeout != 30*time.Second {
		t.Errorf("DefaultRequestTimeout = %v, documented as 30s", ray.DefaultRequestTimeout)
	}
	if _, err := ray.NewClient("http://127.0.0.1:1", ray.WithRequestTimeout(-time.Second)); err == nil {
		t.Error("WithRequestTimeout(-1s) accepted")
	}
	if _, err := ray.NewClient("http://127.0.0.1:1", ray.WithRequestTimeout(0)); err != nil {
		t.Errorf("WithRequestTimeout(0) (the default): %v", err)
	}
	if _, err := ray.NewClient("http://127.0.0.1:1", ray.WithRetry(ray.RetryPolicy{StartupWait: -time.Second})); err == nil {
		t.Error("a negative StartupWait accepted")
	}
}

// TestAnswerTooLarge serves an endless answer: the client reads it
// through its limit and says so, naming the path, instead of a JSON error.
func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "[")
		chunk := []byte(strings.Repeat(`{"type":"SUBMISSION"},`, 1000))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, err := ray.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1 << 20
	ray.SetMaxAnswer(c, limit)
	_, err = c.ListJobs(t.Context())
	if !errors.Is(err, ray.ErrAnswerTooLarge) {
		t.Fatalf("ListJobs of an endless answer: %v, want ErrAnswerTooLarge", err)
	}
	for _, want := range []string{"/api/jobs/", fmt.Sprintf("answer larger than %d bytes", limit)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if errors.Is(err, ray.ErrUnavailable) {
		t.Errorf("error %v matches ErrUnavailable; a too-large answer is not retried", err)
	}
}

// prometheus405 is what Ray's Prometheus exporters answer to a POST.
func prometheus405(w http.ResponseWriter) {
	w.Header().Set("Allow", "OPTIONS,GET")
	w.WriteHeader(http.StatusMethodNotAllowed)
	io.WriteString(w, "# HTTP 405 Method Not Allowed: POST; use OPTIONS or GET\n")
}

// TestNeverServingDashboard: an address that answers 405 to every submit
// gives an error naming the dashboard within RetryPolicy.StartupWait, and
// says so in the log while it waits.
func TestNeverServingDashboard(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		prometheus405(w)
	}))
	t.Cleanup(srv.Close)
	var log syncbuf.Buffer
	const wait = 1500 * time.Millisecond
	c, err := ray.NewClient(srv.URL,
		ray.WithRetry(ray.RetryPolicy{StartupWait: wait, InitialBackoff: 50 * time.Millisecond}),
		ray.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo hi", SubmissionID: "raytpu_never"})
	took := time.Since(start)
	if !errors.Is(err, ray.ErrDashboardNotServing) || !errors.Is(err, ray.ErrUnavailable) {
		t.Fatalf("SubmitJob: %v, want ErrDashboardNotServing and ErrUnavailable", err)
	}
	var ae *ray.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusMethodNotAllowed {
		t.Errorf("error %v does not carry the HTTP 405 answer", err)
	}
	if took < wait || took > wait+time.Second {
		t.Errorf("gave up after %v, want %v (+1s)", took, wait)
	}
	for _, want := range []string{srv.URL, "Ray dashboard", "Prometheus"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if n := posts.Load(); n < 3 {
		t.Errorf("%d POSTs in %v; want the submit polled", n, wait)
	}
	if !strings.Contains(log.String(), "waiting for it to start") {
		t.Errorf("no progress in the log:\n%s", log.String())
	}
}

// TestStartingDashboard answers 405 for a while, then takes the
// submission: the submit succeeds with its one id, and the log says it
// waited.
func TestStartingDashboard(t *testing.T) {
	t.Parallel()
	ready := time.Now().Add(700 * time.Millisecond)
	var accepted atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(ready) {
			prometheus405(w)
			return
		}
		accepted.Add(1)
		io.WriteString(w, `{"submission_id":"raytpu_starting"}`)
	}))
	t.Cleanup(srv.Close)
	var log syncbuf.Buffer
	c, err := ray.NewClient(srv.URL, ray.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo hi", SubmissionID: "raytpu_starting"})
	if err != nil || id != "raytpu_starting" {
		t.Fatalf("SubmitJob = %q, %v", id, err)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d submissions reached the server, want 1", n)
	}
	for _, want := range []string{"waiting for it to start", "serves the route now"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}
