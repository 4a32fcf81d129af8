package ray_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/raytpu/raytpu/internal/testinfra/faultproxy"
	"github.com/raytpu/raytpu/ray"
)

// TestFaults submits jobs through a proxy that loses answers, resets
// connections, answers 503 and stalls bodies, then counts the jobs on the
// real server: every submission must exist exactly once.
func TestFaults(t *testing.T) {
	t.Parallel()
	proxy := dashboardProxy(t)
	c, err := ray.NewClient(proxy.URL, ray.WithRetry(ray.RetryPolicy{
		MaxAttempts: 5, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		AttemptTimeout: 3 * time.Second,
	}))
	if err != nil {
		t.Fatal(err)
	}
	direct := realClient(t)
	run := fmt.Sprint(time.Now().UnixNano())
	submit := faultproxy.Rule{Method: http.MethodPost, PathPrefix: "/api/jobs/"}
	with := func(r faultproxy.Rule, f faultproxy.Fault, times int) faultproxy.Rule {
		r.Fault, r.Times = f, times
		return r
	}
	tests := []struct {
		name   string
		rules  []faultproxy.Rule
		ownID  bool
		wantOK bool
	}{
		{name: "answer lost by reset", rules: []faultproxy.Rule{with(submit, faultproxy.ResetAfter, 1)}, wantOK: true},
		{name: "answer lost, own id", rules: []faultproxy.Rule{with(submit, faultproxy.ResetAfter, 1)}, ownID: true, wantOK: true},
		{name: "503 after the server acted", rules: []faultproxy.Rule{with(submit, faultproxy.StatusAfter, 2)}, wantOK: true},
		{name: "503 before the server", rules: []faultproxy.Rule{with(submit, faultproxy.StatusBefore, 2)}, wantOK: true},
		{name: "reset before the server", rules: []faultproxy.Rule{with(submit, faultproxy.ResetBefore, 1)}, wantOK: true},
		{name: "stalled answer body", rules: []faultproxy.Rule{{Method: http.MethodPost, PathPrefix: "/api/jobs/", Fault: faultproxy.SlowBody, Delay: 6 * time.Second, Times: 1}}, wantOK: true},
		{name: "every answer lost", rules: []faultproxy.Rule{with(submit, faultproxy.ResetAfter, 0)}, wantOK: true},
		{name: "every attempt 503 before the server", rules: []faultproxy.Rule{with(submit, faultproxy.StatusBefore, 0)}, wantOK: false},
	}
	var want []string
	for i, tt := range tests {
		// Sequential: the subtests share the proxy's rules.
		t.Run(tt.name, func(t *testing.T) {
			proxy.Reset()
			for _, r := range tt.rules {
				proxy.Add(r)
			}
			// Reads are faulted too: the confirming GET must survive one 503.
			proxy.Add(faultproxy.Rule{Method: http.MethodGet, PathPrefix: "/api/jobs/", Fault: faultproxy.StatusBefore, Times: 1})
			entry := fmt.Sprintf("echo fault case %d %s", i, run)
			sub := ray.JobSubmission{Entrypoint: entry, Metadata: map[string]string{"raytpu-fault-run": run}}
			if tt.ownID {
				sub.SubmissionID = fmt.Sprintf("raytpu_fault_%s_%d", run, i)
			}
			id, err := c.SubmitJob(t.Context(), sub)
			posts := proxy.Requests(http.MethodPost, "/api/jobs/")
			if !tt.wantOK {
				if !errors.Is(err, ray.ErrUnavailable) {
					t.Fatalf("SubmitJob = %q, %v; want ErrUnavailable", id, err)
				}
				if len(posts) != 5 {
					t.Errorf("%d attempts, want 5", len(posts))
				}
				return
			}
			if err != nil {
				t.Fatalf("SubmitJob: %v (after %d POSTs)", err, len(posts))
			}
			if tt.ownID && id != sub.SubmissionID {
				t.Errorf("id = %s, want %s", id, sub.SubmissionID)
			}
			want = append(want, entry)
			job, err := direct.GetJob(t.Context(), id)
			if err != nil || job.Entrypoint != entry {
				t.Errorf("job %s on the server: %+v, %v", id, job, err)
			}
			t.Logf("%d POSTs; faults %v", len(posts), posts)
		})
	}

	// Count on the real server, not through the proxy.
	jobs, err := direct.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		if j.Metadata["raytpu-fault-run"] == run {
			got = append(got, j.Entrypoint)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs on the server (-want +got): lost or duplicated submissions:\n%s", diff)
	}
}

// TestUploadStreamingFaults streams packages through a proxy that fails
// PUTs, and checks what lands on the real server.
func TestUploadStreamingFaults(t *testing.T) {
	t.Parallel()
	proxy := dashboardProxy(t)
	c, err := ray.NewClient(proxy.URL, ray.WithRetry(ray.RetryPolicy{MaxAttempts: 4, InitialBackoff: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	direct := realClient(t)
	ctx := t.Context()
	noise := func(n int) string {
		b := make([]byte, n)
		rand.Read(b)
		return string(b)
	}

	t.Run("retried after a 503 and a reset", func(t *testing.T) {
		proxy.Reset()
		proxy.Add(faultproxy.Rule{Method: http.MethodPut, Fault: faultproxy.StatusBefore, Times: 1})
		proxy.Add(faultproxy.Rule{Method: http.MethodPut, Fault: faultproxy.ResetAfter, Times: 1})
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.bin": noise(300 << 10), "b.txt": strings.Repeat("text ", 50000)})
		uri, uploaded, err := c.UploadDir(ctx, dir, ray.PackageOptions{})
		if err != nil || !uploaded {
			t.Fatalf("UploadDir = %s, %v, %v", uri, uploaded, err)
		}
		if puts := proxy.Requests(http.MethodPut, "/api/packages/"); len(puts) != 3 {
			t.Errorf("%d PUTs, want 3: %v", len(puts), puts)
		}
		if ok, err := direct.PackageExists(ctx, uri); err != nil || !ok {
			t.Errorf("package %s on the server: %v, %v", uri, ok, err)
		}
		want, err := ray.HashDir(dir, ray.PackageOptions{})
		if err != nil || want != uri {
			t.Errorf("URI %s, HashDir says %s (%v)", uri, want, err)
		}
	})

	t.Run("over the size limit", func(t *testing.T) {
		proxy.Reset()
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.bin": noise(64 << 10)})
		uri, _ := ray.HashDir(dir, ray.PackageOptions{})
		_, _, err := c.UploadDir(ctx, dir, ray.PackageOptions{MaxSize: 32 << 10})
		if err == nil || !strings.Contains(err.Error(), "over the limit of 32768 bytes") {
			t.Fatalf("UploadDir over the limit: %v", err)
		}
		if ok, err := direct.PackageExists(ctx, uri); err != nil || ok {
			t.Errorf("a partial package %s reached the server: %v, %v", uri, ok, err)
		}
	})
}
