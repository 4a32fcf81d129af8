package ray_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raytpu/raytpu/ray"
)

// httptest fakes cover what the real dashboard cannot be made to do on
// demand: huge error bodies, a 500 that asks to try again, exhausted
// retries, and what reaches the wire.

var fastRetry = ray.WithRetry(ray.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})

func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    []int // answers in order; the last repeats
		body      string
		wantCalls int32
		wantErr   error
	}{
		{"503 then ok", []int{503, 503, 200}, `{"version":"4"}`, 3, nil},
		{"503 forever", []int{503}, "busy", 3, ray.ErrUnavailable},
		{"502 then ok", []int{502, 200}, `{"version":"4"}`, 2, nil},
		{"404 is final", []int{404}, "Job x does not exist", 1, ray.ErrNotFound},
		{"500 traceback is final", []int{500}, "Traceback (most recent call last):\n  File \"x\"\nRuntimeError: boom\n", 1, ray.ErrUnavailable},
		{"500 try again later", []int{500, 200}, `{"version":"4"}`, 2, nil},
		{"500 actor died", []int{500, 500, 200}, `{"version":"4"}`, 3, nil},
		{"400 is final", []int{400}, "bad", 1, ray.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				st := tt.status[min(n, len(tt.status))-1]
				w.WriteHeader(st)
				switch {
				case st == 200:
					io.WriteString(w, tt.body)
				case tt.name == "500 try again later":
					io.WriteString(w, "No available agent to submit job, please try again later.")
				case tt.name == "500 actor died":
					io.WriteString(w, "Traceback (most recent call last):\n  File \"x\"\nray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n")
				default:
					io.WriteString(w, tt.body)
				}
			}))
			defer srv.Close()
			c, err := ray.NewClient(srv.URL, fastRetry)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Version(t.Context())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestErrorBodyIsBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write(bytes.Repeat([]byte("x"), 4<<20))
	}))
	defer srv.Close()
	c, _ := ray.NewClient(srv.URL)
	_, err := c.GetJob(t.Context(), "j")
	var ae *ray.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
	if len(ae.Body) != 64<<10 || len(ae.Error()) > 1024 {
		t.Errorf("error body %d bytes, message %d bytes; want 64 KiB and a short message", len(ae.Body), len(ae.Error()))
	}
}

// TestNoCredentialsLeak checks that errors and logs never show userinfo,
// token query parameters or header values.
func TestNoCredentialsLeak(t *testing.T) {
	t.Parallel()
	var gotAuth, gotKey atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		gotKey.Store(r.Header.Get("X-Api-Key"))
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	// Header auth against a live server; userinfo auth against a dead port.
	c, err := ray.NewClient(srv.URL, ray.WithHeader("X-Api-Key", "hunter2-key"), ray.WithLogger(logger), fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := c.ListJobs(t.Context())
	dead, err := ray.NewClient("http://alice:hunter2-pw@127.0.0.1:1/prefix", ray.WithLogger(logger), fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	_, err2 := dead.ListJobs(t.Context())
	for _, err := range []error{err1, err2} {
		if !errors.Is(err, ray.ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	}
	if gotKey.Load() != "hunter2-key" {
		t.Errorf("server saw X-Api-Key %q", gotKey.Load())
	}
	all := err1.Error() + "\n" + err2.Error() + "\n" + logs.String() + dead.BaseURL()
	for _, secret := range []string{"hunter2", "alice"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q leaked:\n%s", secret, all)
		}
	}
	if !strings.Contains(logs.String(), "retrying") || !strings.Contains(all, u.Host) {
		t.Errorf("logs lack the retries or host:\n%s", all)
	}

	// Basic auth from userinfo reaches the server.
	basic, _ := ray.NewClient("http://alice:hunter2-pw@"+u.Host, ray.WithRetry(ray.RetryPolicy{MaxAttempts: 1}))
	basic.ListJobs(t.Context())
	if a, _ := gotAuth.Load().(string); !strings.HasPrefix(a, "Basic ") {
		t.Errorf("Authorization = %q, want basic auth from userinfo", a)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"http://u:p@host:8265/api?token=abc&x=1", "http://host:8265/api?token=REDACTED&x=1"},
		{"https://host/api/jobs/?access_token=t&X-Amz-Signature=s", "https://host/api/jobs/?X-Amz-Signature=REDACTED&access_token=REDACTED"},
		{"http://host/plain", "http://host/plain"},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.in)
		if got := ray.Redact(u); got != tt.want {
			t.Errorf("Redact(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		base string
		opts []ray.Option
	}{
		{"bad scheme", "ftp://host", nil},
		{"no host", "http://", nil},
		{"nil http client", "http://h", []ray.Option{ray.WithHTTPClient(nil)}},
		{"bad header name", "http://h", []ray.Option{ray.WithHeader("Bad Name", "v")}},
		{"header injection", "http://h", []ray.Option{ray.WithHeader("X", "a\r\nEvil: 1")}},
		{"nil tls", "http://h", []ray.Option{ray.WithTLSConfig(nil)}},
		{"nil logger", "http://h", []ray.Option{ray.WithLogger(nil)}},
		{"negative retry", "http://h", []ray.Option{ray.WithRetry(ray.RetryPolicy{MaxAttempts: -1})}},
		{"max below initial", "http://h", []ray.Option{ray.WithRetry(ray.RetryPolicy{InitialBackoff: time.Second, MaxBackoff: time.Millisecond})}},
		{"tls on custom transport", "http://h", []ray.Option{ray.WithHTTPClient(&http.Client{Transport: roundTripFunc(nil)}), ray.WithTLSConfig(&tls.Config{})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := ray.NewClient(tt.base, tt.opts...); err == nil {
				t.Error("no error")
			}
		})
	}
	// The TLS config is copied: changing it afterwards has no effect.
	cfg := &tls.Config{ServerName: "a"}
	if _, err := ray.NewClient("https://h", ray.WithTLSConfig(cfg)); err != nil {
		t.Fatal(err)
	}
	cfg.ServerName = "b"
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSubmitIDStableAcrossRetries checks the wire: every attempt carries
// the same generated submission_id, and a duplicate answer on a retry is
// confirmed by GET.
func TestSubmitIDStableAcrossRetries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var ids []string
	var posts, gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			var sub ray.JobSubmission
			if err := jsonUnmarshal(b, &sub); err != nil {
				t.Error(err)
			}
			mu.Lock()
			ids = append(ids, sub.SubmissionID)
			mu.Unlock()
			if posts.Add(1) == 1 {
				http.Error(w, "gateway", http.StatusBadGateway)
				return
			}
			http.Error(w, "Traceback (most recent call last):\nValueError: Job with submission_id "+sub.SubmissionID+" already exists. Please use a different submission_id.", 500)
		case http.MethodGet:
			gets.Add(1)
			io.WriteString(w, `{"type":"SUBMISSION","submission_id":"`+strings.TrimPrefix(r.URL.Path, "/api/jobs/")+`","status":"PENDING","entrypoint":"echo hi"}`)
		}
	}))
	defer srv.Close()
	c, _ := ray.NewClient(srv.URL, fastRetry)
	id, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	seen := slices.Clone(ids)
	mu.Unlock()
	if len(seen) != 2 || seen[0] != seen[1] || seen[0] != id || !strings.HasPrefix(id, "raytpu_") {
		t.Errorf("ids on the wire %v, returned %s", seen, id)
	}
	if gets.Load() != 1 {
		t.Errorf("%d confirming GETs, want 1", gets.Load())
	}

	// A duplicate on retry with another entrypoint is not ours: error.
	c2, _ := ray.NewClient(srv.URL, fastRetry)
	posts.Store(0)
	if _, err := c2.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo other"}); !errors.Is(err, ray.ErrAlreadyExists) {
		t.Errorf("duplicate with another entrypoint: %v, want ErrAlreadyExists", err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestJobIDsAreEscaped(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.EscapedPath() + " " + r.URL.Path)
		io.WriteString(w, `{"status":"RUNNING"}`)
	}))
	defer srv.Close()
	c, _ := ray.NewClient(srv.URL + "/base/")
	if _, err := c.GetJob(t.Context(), "odd id?#%"); err != nil {
		t.Fatal(err)
	}
	if want := "/base/api/jobs/odd%20id%3F%23%25 /base/api/jobs/odd id?#%"; got.Load() != want {
		t.Errorf("server saw %q, want %q", got.Load(), want)
	}
	for _, bad := range []string{"", "a/b"} {
		if _, err := c.GetJob(t.Context(), bad); !errors.Is(err, ray.ErrInvalid) {
			t.Errorf("GetJob(%q) = %v, want ErrInvalid", bad, err)
		}
		if _, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "x", SubmissionID: "a/b"}); !errors.Is(err, ray.ErrInvalid) {
			t.Errorf("SubmitJob with id a/b = %v, want ErrInvalid", err)
		}
	}
}

func TestWaitJobRidesOutOutages(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case n == 1:
			io.WriteString(w, `{"submission_id":"j","status":"PENDING"}`)
		case n <= 5: // more 503s than one GetJob retries
			http.Error(w, "restarting", http.StatusServiceUnavailable)
		case n == 6:
			io.WriteString(w, `{"submission_id":"j","status":"RUNNING"}`)
		default:
			io.WriteString(w, `{"submission_id":"j","status":"FAILED","message":"exit 1"}`)
		}
	}))
	defer srv.Close()
	c, _ := ray.NewClient(srv.URL, fastRetry)
	var seen []ray.JobStatus
	j, err := c.WaitJob(t.Context(), "j", ray.WaitOptions{PollInterval: time.Millisecond,
		OnTransition: func(j ray.JobInfo) { seen = append(seen, j.Status) }})
	if err != nil || j.Status != ray.JobFailed || j.Message != "exit 1" {
		t.Fatalf("WaitJob = %+v, %v", j, err)
	}
	if want := []ray.JobStatus{ray.JobPending, ray.JobRunning, ray.JobFailed}; !slices.Equal(seen, want) {
		t.Errorf("transitions %v, want %v", seen, want)
	}
}

func TestDeleteAnswerLost(t *testing.T) {
	t.Parallel()
	var deletes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if deletes.Add(1) == 1 {
			// The server deletes the job, then the connection dies.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		http.Error(w, "Job j does not exist", http.StatusNotFound)
	}))
	defer srv.Close()
	c, _ := ray.NewClient(srv.URL, fastRetry)
	deleted, err := c.DeleteJob(t.Context(), "j")
	if err != nil || !deleted || deletes.Load() != 2 {
		t.Errorf("DeleteJob = %v, %v after %d calls; want true, nil after 2", deleted, err, deletes.Load())
	}
	// A first answer of 404 is an error.
	if _, err := c.DeleteJob(t.Context(), "j"); !errors.Is(err, ray.ErrNotFound) {
		t.Errorf("DeleteJob(unknown) = %v, want ErrNotFound", err)
	}
}
