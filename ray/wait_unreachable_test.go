package ray_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/ray"
)

// deadAddress is a local address where nothing listens: port 1, which no
// server of the tests binds. A port freed by closing a listener is not:
// the kernel may hand it to the next listener on the machine (a parallel
// package's cluster) before the client connects, which then answers.
func deadAddress(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:1"
}

// TestWaitUnreachable: a wait on a dashboard nobody answers for fails
// after the first poll's retries, with an error that matches
// ErrUnreachable and ErrUnavailable, names the address, and never reads
// as "not found". The wait's own deadline is far away: reaching it would
// mean the wait kept polling.
func TestWaitUnreachable(t *testing.T) {
	t.Parallel()
	addr := deadAddress(t)
	c, err := ray.NewClient("http://"+addr, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	waits := map[string]func(context.Context) error{
		"WaitServeApplication": func(ctx context.Context) error {
			_, err := c.WaitServeApplication(ctx, "chat", ray.WaitServeOptions{PollInterval: time.Millisecond})
			return err
		},
		"WaitJob": func(ctx context.Context) error {
			_, err := c.WaitJob(ctx, "j", ray.WaitOptions{PollInterval: time.Millisecond})
			return err
		},
	}
	for name, wait := range waits {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
			defer cancel()
			err := wait(ctx)
			if !errors.Is(err, ray.ErrUnreachable) || !errors.Is(err, ray.ErrUnavailable) {
				t.Fatalf("%s = %v; want ErrUnreachable and ErrUnavailable", name, err)
			}
			if errors.Is(err, ray.ErrNotFound) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Errorf("%s = %v; an unreachable dashboard is neither not found nor a timeout", name, err)
			}
			if !strings.Contains(err.Error(), addr) {
				t.Errorf("%s = %v; the error names no address (%s)", name, err, addr)
			}
		})
	}
}

// TestWaitNotFoundIsNotUnreachable: a dashboard that answers, without the
// application or job, ends the wait with ErrNotFound, not ErrUnavailable.
func TestWaitNotFoundIsNotUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/serve/") {
			io.WriteString(w, `{"applications": {"other": {"name": "other", "status": "RUNNING", "deployments": {}}}}`)
			return
		}
		http.Error(w, "Job j does not exist", http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := ray.NewClient(srv.URL, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WaitServeApplication(t.Context(), "chat", ray.WaitServeOptions{PollInterval: time.Millisecond})
	if !errors.Is(err, ray.ErrNotFound) || errors.Is(err, ray.ErrUnavailable) {
		t.Errorf("WaitServeApplication = %v; want ErrNotFound only", err)
	}
	_, err = c.WaitJob(t.Context(), "j", ray.WaitOptions{PollInterval: time.Millisecond})
	if !errors.Is(err, ray.ErrNotFound) || errors.Is(err, ray.ErrUnavailable) {
		t.Errorf("WaitJob = %v; want ErrNotFound only", err)
	}
}

// TestWaitServerErrorsUntilDeadline: a dashboard that answers only 503
// is reachable: the wait rides it out until its context ends, and the
// error then matches the deadline and ErrUnavailable, never ErrNotFound
// or ErrUnreachable.
func TestWaitServerErrorsUntilDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, err := ray.NewClient(srv.URL, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = c.WaitServeApplication(ctx, "chat", ray.WaitServeOptions{PollInterval: time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ray.ErrUnavailable) || errors.Is(err, ray.ErrNotFound) || errors.Is(err, ray.ErrUnreachable) {
		t.Errorf("WaitServeApplication = %v; want the deadline and ErrUnavailable, not ErrNotFound or ErrUnreachable", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = c.WaitJob(ctx, "j", ray.WaitOptions{PollInterval: time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ray.ErrUnavailable) || errors.Is(err, ray.ErrNotFound) {
		t.Errorf("WaitJob = %v; want the deadline and ErrUnavailable", err)
	}
}
