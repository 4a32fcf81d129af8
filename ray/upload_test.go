package ray_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/faultproxy"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// TestConcurrentSubmissionsUploadOnce submits two jobs with the same local
// working_dir at the same time on one Client, through a proxy that counts
// requests and holds the package check's answer for a second so that both
// submissions are packaging at once. The real dashboard must see one
// package check and one PUT, and both jobs must read the directory.
func TestConcurrentSubmissionsUploadOnce(t *testing.T) {
	t.Parallel()
	proxy := dashboardProxy(t)
	proxy.Add(faultproxy.Rule{Method: http.MethodGet, PathPrefix: "/api/packages/", Fault: faultproxy.SlowBody, Delay: time.Second})
	c, err := ray.NewClient(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := fmt.Sprintf("shared-%d", time.Now().UnixNano())
	writeTree(t, dir, map[string]string{"payload.txt": secret})
	env := &runtimeenv.RuntimeEnv{WorkingDir: dir}

	var wg sync.WaitGroup
	uris := make([]string, 2)
	ids := make([]string, 2)
	errs := make([]error, 2)
	start := make(chan struct{})
	for i := range 2 {
		wg.Go(func() {
			<-start
			prepared, err := c.PrepareRuntimeEnv(t.Context(), env, ray.PackageOptions{})
			if err != nil {
				errs[i] = err
				return
			}
			uris[i] = prepared.WorkingDir
			ids[i], errs[i] = c.SubmitJob(t.Context(), ray.JobSubmission{
				Entrypoint: `python -c "print('read:', open('payload.txt').read())"`,
				RuntimeEnv: prepared,
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
	}
	if uris[0] != uris[1] || !strings.HasPrefix(uris[0], "gcs://_ray_pkg_") {
		t.Errorf("working_dir URIs %q and %q: want one gcs:// package", uris[0], uris[1])
	}
	if puts := proxy.Requests(http.MethodPut, "/api/packages/"); len(puts) != 1 {
		t.Errorf("%d package PUTs for two concurrent submissions of one directory, want 1: %v", len(puts), puts)
	}
	if gets := proxy.Requests(http.MethodGet, "/api/packages/"); len(gets) != 1 {
		t.Errorf("%d package checks for two concurrent submissions of one directory, want 1: %v", len(gets), gets)
	}
	for _, id := range ids {
		job, err := c.WaitJob(t.Context(), id, ray.WaitOptions{PollInterval: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		logs, err := c.JobLogs(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != ray.JobSucceeded || !strings.Contains(logs, "read: "+secret) {
			t.Errorf("job %s: %s %s\n%s", id, job.Status, job.Message, logs)
		}
	}
}
