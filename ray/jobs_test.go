package ray_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/faultproxy"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// These tests run against a real Ray 2.60 dashboard (see main_test.go).

func TestVersion(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	v, err := c.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v.RayVersion != "2.60.0" || v.Version != "4" || v.SessionName == "" || v.RayCommit == "" {
		t.Errorf("Version = %+v, want Ray 2.60.0, API version 4", v)
	}
}

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	ctx := t.Context()
	sub := ray.JobSubmission{
		Entrypoint: `python -c "import os, time
for i in range(3):
    print('line', i, os.environ['RAYTPU_GREETING'], flush=True)
    time.sleep(0.5)"`,
		Metadata:   map[string]string{"owner": "raytpu-test"},
		RuntimeEnv: &runtimeenv.RuntimeEnv{EnvVars: map[string]string{"RAYTPU_GREETING": "hello"}},
	}
	id, err := c.SubmitJob(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "raytpu_") {
		t.Errorf("generated submission id %q lacks the raytpu_ prefix", id)
	}

	// Follow the log while the job runs.
	var tail strings.Builder
	for chunk, err := range c.TailJobLogs(ctx, id) {
		if err != nil {
			t.Fatalf("TailJobLogs: %v", err)
		}
		tail.WriteString(chunk)
	}
	for i := range 3 {
		if want := fmt.Sprintf("line %d hello", i); !strings.Contains(tail.String(), want) {
			t.Errorf("tailed log lacks %q:\n%s", want, tail.String())
		}
	}

	var seen []ray.JobStatus
	job, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 200 * time.Millisecond,
		OnTransition: func(j ray.JobInfo) { seen = append(seen, j.Status) }})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != ray.JobSucceeded || job.DriverExitCode == nil || *job.DriverExitCode != 0 {
		t.Fatalf("job ended %s (exit %v): %s", job.Status, job.DriverExitCode, job.Message)
	}
	if seen[len(seen)-1] != ray.JobSucceeded || slices.Contains(seen[:len(seen)-1], ray.JobSucceeded) {
		t.Errorf("transitions %v: want SUCCEEDED once, last", seen)
	}
	if job.Type != "SUBMISSION" || job.SubmissionID != id || job.Entrypoint != sub.Entrypoint ||
		job.Started().IsZero() || job.Ended().Before(job.Started()) {
		t.Errorf("job = %+v", job)
	}
	if diff := cmp.Diff(sub.Metadata, job.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if job.RuntimeEnv == nil || job.RuntimeEnv.EnvVars["RAYTPU_GREETING"] != "hello" {
		t.Errorf("runtime_env = %+v", job.RuntimeEnv)
	}

	logs, err := c.JobLogs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "line 2 hello") {
		t.Errorf("JobLogs lacks the last line:\n%s", logs)
	}
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(jobs, func(j ray.JobInfo) bool { return j.SubmissionID == id }) {
		t.Errorf("ListJobs lacks %s", id)
	}
	// Stopping a finished job reports false.
	if stopped, err := c.StopJob(ctx, id); err != nil || stopped {
		t.Errorf("StopJob(finished) = %v, %v; want false, nil", stopped, err)
	}
	if deleted, err := c.DeleteJob(ctx, id); err != nil || !deleted {
		t.Fatalf("DeleteJob = %v, %v", deleted, err)
	}
	if _, err := c.GetJob(ctx, id); !errors.Is(err, ray.ErrNotFound) {
		t.Errorf("GetJob after delete: %v, want ErrNotFound", err)
	}
}

func TestStopJob(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	ctx := t.Context()
	id, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "sleep 300", SubmissionID: "raytpu_test_stop_" + fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, id, ray.JobRunning)
	// A running job cannot be deleted.
	if _, err := c.DeleteJob(ctx, id); !errors.Is(err, ray.ErrConflict) {
		t.Errorf("DeleteJob(running) = %v, want ErrConflict", err)
	}
	if stopped, err := c.StopJob(ctx, id); err != nil || !stopped {
		t.Fatalf("StopJob = %v, %v", stopped, err)
	}
	job, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != ray.JobStopped {
		t.Errorf("status after stop = %s, want STOPPED", job.Status)
	}
	if _, err := c.DeleteJob(ctx, id); err != nil {
		t.Errorf("DeleteJob(stopped): %v", err)
	}
}

// dashboardProxy starts a fault proxy in front of the shared cluster's
// dashboard, closed when the test ends.
func dashboardProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	proxy, err := faultproxy.New(realCluster(t).DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	return proxy
}

// runJob submits sub, waits until the job ends and returns its id, final
// state and driver log.
func runJob(t *testing.T, c *ray.Client, sub ray.JobSubmission) (string, ray.JobInfo, string) {
	t.Helper()
	id, err := c.SubmitJob(t.Context(), sub)
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.WaitJob(t.Context(), id, ray.WaitOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	logs, err := c.JobLogs(t.Context(), id)
	if err != nil {
		t.Fatalf("logs of job %s (%s): %v", id, job.Status, err)
	}
	return id, job, logs
}

// waitStatus polls until the job has status want.
func waitStatus(t *testing.T, c *ray.Client, id string, want ray.JobStatus) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		j, err := c.GetJob(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == want {
			return
		}
		if j.Status.Terminal() {
			t.Fatalf("job %s ended %s before reaching %s: %s", id, j.Status, want, j.Message)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s never reached %s", id, want)
}

func TestDuplicateSubmissionID(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	id := "raytpu_test_dup_" + fmt.Sprint(time.Now().UnixNano())
	if _, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo one", SubmissionID: id}); err != nil {
		t.Fatal(err)
	}
	_, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "echo one", SubmissionID: id})
	if !errors.Is(err, ray.ErrAlreadyExists) {
		t.Fatalf("second submit with id %s: %v, want ErrAlreadyExists", id, err)
	}
	var ae *ray.APIError
	if !errors.As(err, &ae) || ae.Method != http.MethodPost || ae.Path != "/api/jobs/" ||
		!strings.Contains(ae.Message, "already exists") {
		t.Errorf("error = %#v", err)
	}
	t.Logf("Ray answers a duplicate submission_id with HTTP %d: %s", ae.Status, ae.Message)
	if _, err := c.WaitJob(t.Context(), id, ray.WaitOptions{PollInterval: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	ctx := t.Context()
	const id = "raytpu_no_such_job"
	calls := map[string]func() error{
		"GetJob":    func() error { _, err := c.GetJob(ctx, id); return err },
		"JobLogs":   func() error { _, err := c.JobLogs(ctx, id); return err },
		"StopJob":   func() error { _, err := c.StopJob(ctx, id); return err },
		"DeleteJob": func() error { _, err := c.DeleteJob(ctx, id); return err },
		"TailJobLogs": func() error {
			for _, err := range c.TailJobLogs(ctx, id) {
				return err
			}
			return nil
		},
		"PackageExists": func() error {
			ok, err := c.PackageExists(ctx, "gcs://_ray_pkg_0000000000000000.zip")
			if err == nil && !ok {
				return ray.ErrNotFound
			}
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := call()
			if !errors.Is(err, ray.ErrNotFound) {
				t.Errorf("%s(unknown) = %v, want ErrNotFound", name, err)
			}
			var ae *ray.APIError
			if name != "PackageExists" && (!errors.As(err, &ae) || ae.Status != http.StatusNotFound) {
				t.Errorf("%s: error %#v is not an *APIError with status 404", name, err)
			}
		})
	}
}

// TestWorkingDir uploads a working_dir through a counting proxy, runs a
// job that reads a file from it, and checks the second upload is skipped.
func TestWorkingDir(t *testing.T) {
	t.Parallel()
	proxy := dashboardProxy(t)
	c, err := ray.NewClient(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	secret := fmt.Sprintf("payload-%d", time.Now().UnixNano())
	writeTree(t, dir, map[string]string{"data/payload.txt": secret, "ignored.log": "x"})

	env := &runtimeenv.RuntimeEnv{WorkingDir: dir, Excludes: []string{"*.log"}}
	prepared, err := c.PrepareRuntimeEnv(ctx, env, ray.PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantURI, _ := pythonPackage(t, dir, []string{"*.log"})
	if prepared.WorkingDir != wantURI {
		t.Errorf("working_dir = %s, Python client would use %s", prepared.WorkingDir, wantURI)
	}
	if env.WorkingDir != dir {
		t.Errorf("PrepareRuntimeEnv changed its input: %s", env.WorkingDir)
	}
	id, job, logs := runJob(t, c, ray.JobSubmission{
		Entrypoint: `python -c "import os; print('read:', open('data/payload.txt').read()); print('log present:', os.path.exists('ignored.log'))"`,
		RuntimeEnv: prepared,
	})
	if job.Status != ray.JobSucceeded || !strings.Contains(logs, "read: "+secret) || !strings.Contains(logs, "log present: False") {
		t.Fatalf("job %s: %s\n%s", job.Status, job.Message, logs)
	}
	// The websocket tail passes the reverse proxy; on a finished job it
	// replays the log and ends.
	var tail strings.Builder
	for chunk, err := range c.TailJobLogs(ctx, id) {
		if err != nil {
			t.Fatalf("TailJobLogs through a proxy: %v", err)
		}
		tail.WriteString(chunk)
	}
	if !strings.Contains(tail.String(), "read: "+secret) {
		t.Errorf("tail of a finished job lacks its output:\n%s", tail.String())
	}

	// Second time: the package is there, nothing is uploaded.
	again, err := c.PrepareRuntimeEnv(ctx, env, ray.PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.WorkingDir != prepared.WorkingDir {
		t.Errorf("second URI %s != first %s", again.WorkingDir, prepared.WorkingDir)
	}
	pkg, err := ray.PackageDir(dir, ray.PackageOptions{Excludes: []string{"*.log"}})
	if err != nil {
		t.Fatal(err)
	}
	if uploaded, err := c.UploadPackage(ctx, pkg); err != nil || uploaded {
		t.Errorf("UploadPackage(existing) = %v, %v; want false, nil", uploaded, err)
	}
	if puts := proxy.Requests(http.MethodPut, "/api/packages/"); len(puts) != 1 {
		t.Errorf("%d PUTs of packages, want 1: %v", len(puts), puts)
	}
	if gets := proxy.Requests(http.MethodGet, "/api/packages/"); len(gets) != 3 {
		t.Errorf("%d GETs of packages, want 3: %v", len(gets), gets)
	}
}

// TestTailBreakEarly checks that breaking out of a tail loop early closes
// the socket cleanly and leaves the job alone.
func TestTailBreakEarly(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	ctx := t.Context()
	id, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: `python -c "import time
for i in range(100):
    print('tick', i, flush=True); time.sleep(0.2)"`})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for chunk, err := range c.TailJobLogs(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(chunk, "tick") {
			n++
			break
		}
	}
	if n != 1 {
		t.Fatalf("saw no tick")
	}
	if _, err := c.StopJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

func TestSubmitRejectsLocalPaths(t *testing.T) {
	t.Parallel()
	c, err := ray.NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, env := range []*runtimeenv.RuntimeEnv{{WorkingDir: dir}, {PyModules: []string{filepath.Join(dir, "mod")}}, {WorkingDir: "relative/dir"}} {
		_, err := c.SubmitJob(t.Context(), ray.JobSubmission{Entrypoint: "true", RuntimeEnv: env})
		if !errors.Is(err, ray.ErrInvalid) || !strings.Contains(err.Error(), "PrepareRuntimeEnv") {
			t.Errorf("SubmitJob(%+v) = %v, want ErrInvalid naming PrepareRuntimeEnv", env, err)
		}
	}
	if _, err := c.SubmitJob(t.Context(), ray.JobSubmission{}); !errors.Is(err, ray.ErrInvalid) {
		t.Errorf("empty entrypoint: %v", err)
	}
	_ = os.Remove(dir)
}

// TestPyModules uploads a package directory and a single .py file as
// py_modules and runs a job that imports both.
func TestPyModules(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	ctx := t.Context()
	root := t.TempDir()
	token := fmt.Sprint(time.Now().UnixNano())
	writeTree(t, root, map[string]string{
		"raytpu_mod_a/__init__.py": "VALUE = 'a-" + token + "'\n",
		"raytpu_mod_b.py":          "VALUE = 'b-" + token + "'\n",
	})
	env, err := c.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{PyModules: []string{
		filepath.Join(root, "raytpu_mod_a"), filepath.Join(root, "raytpu_mod_b.py"),
	}}, ray.PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range env.PyModules {
		if !strings.HasPrefix(m, "gcs://_ray_pkg_") {
			t.Fatalf("py_modules not uploaded: %v", env.PyModules)
		}
	}
	_, job, logs := runJob(t, c, ray.JobSubmission{
		Entrypoint: `python -c "import raytpu_mod_a, raytpu_mod_b; print(raytpu_mod_a.VALUE, raytpu_mod_b.VALUE)"`,
		RuntimeEnv: env,
	})
	if want := "a-" + token + " b-" + token; job.Status != ray.JobSucceeded || !strings.Contains(logs, want) {
		t.Fatalf("job %s (%s), logs lack %q:\n%s", job.Status, job.Message, want, logs)
	}
}
