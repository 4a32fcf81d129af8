package authtest_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// cleanTokenEnv gives the test a HOME without ~/.ray/auth_token and no
// Ray token variables.
func cleanTokenEnv(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{ray.EnvAuthMode, ray.EnvAuthToken, ray.EnvAuthTokenPath} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home
}

// submit runs a job that reads a file of its uploaded working_dir and
// checks that it succeeds.
func submit(t *testing.T, c *ray.Client) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	want := "auth-ok-" + time.Now().Format("150405.000000000")
	if err := os.WriteFile(filepath.Join(dir, "payload.txt"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := c.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{WorkingDir: dir}, ray.PackageOptions{})
	if err != nil {
		t.Fatalf("PrepareRuntimeEnv: %v", err)
	}
	id, err := c.SubmitJob(ctx, ray.JobSubmission{
		Entrypoint: `python -c "import ray; ray.init(); print('read:', open('payload.txt').read())"`,
		RuntimeEnv: env,
	})
	if err != nil {
		t.Fatalf("SubmitJob: %v", err)
	}
	job, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	logs, err := c.JobLogs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != ray.JobSucceeded || !strings.Contains(logs, "read: "+want) {
		t.Fatalf("job %s: %s %s\n%s", id, job.Status, job.Message, logs)
	}
	var tail strings.Builder
	for chunk, err := range c.TailJobLogs(ctx, id) {
		if err != nil {
			t.Fatalf("TailJobLogs: %v", err)
		}
		tail.WriteString(chunk)
	}
	if !strings.Contains(tail.String(), "read: "+want) {
		t.Errorf("log tail lacks the job's output:\n%s", tail.String())
	}
}

// TestTokenAuth runs the client against a real cluster with token
// authentication: without a token every call fails with
// ErrUnauthenticated, a wrong token too (and it never shows up in an error
// or a log), and with the cluster's token (given explicitly, or found the
// way Ray's clients find it) Version and a job submission work.
func TestTokenAuth(t *testing.T) {
	cl := raytest.Start(t, raycluster.Config{HeadCPUs: 2, TokenAuth: true})
	token := cl.AuthToken()
	ctx := t.Context()

	t.Run("no token", func(t *testing.T) {
		cleanTokenEnv(t)
		c, err := ray.NewClient(cl.DashboardURL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Version(ctx)
		if !errors.Is(err, ray.ErrUnauthenticated) {
			t.Fatalf("Version without a token: %v; want ErrUnauthenticated", err)
		}
		if !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "ray.WithToken") || !strings.Contains(err.Error(), ray.EnvAuthToken) {
			t.Errorf("the error does not say how to supply a token: %v", err)
		}
		if _, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "echo hi"}); !errors.Is(err, ray.ErrUnauthenticated) {
			t.Errorf("SubmitJob without a token: %v; want ErrUnauthenticated", err)
		}
		for _, err := range c.TailJobLogs(ctx, "raytpu_nosuchjob") {
			if !errors.Is(err, ray.ErrUnauthenticated) {
				t.Errorf("TailJobLogs without a token: %v; want ErrUnauthenticated", err)
			}
		}
	})

	t.Run("wrong token is not shown", func(t *testing.T) {
		cleanTokenEnv(t)
		wrong := "wrong" + token[5:]
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, err := ray.NewClient(cl.DashboardURL, ray.WithToken(wrong), ray.WithLogger(logger),
			ray.WithRetry(ray.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		var errs []error
		_, err = c.Version(ctx)
		errs = append(errs, err)
		_, err = c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "echo hi"})
		errs = append(errs, err)
		_, err = c.GetJob(ctx, "raytpu_nosuchjob")
		errs = append(errs, err)
		for _, err := range c.TailJobLogs(ctx, "raytpu_nosuchjob") {
			errs = append(errs, err)
		}
		for i, err := range errs {
			if !errors.Is(err, ray.ErrUnauthenticated) || !strings.Contains(err.Error(), "HTTP 403") {
				t.Errorf("call %d with a wrong token: %v; want HTTP 403 matching ErrUnauthenticated", i, err)
				continue
			}
			if !strings.Contains(err.Error(), "ray.WithToken") {
				t.Errorf("call %d: the error does not say how to supply a token: %v", i, err)
			}
			if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), token) {
				t.Errorf("call %d: the error shows a token: %v", i, err)
			}
		}
		if logs.Len() == 0 {
			t.Fatal("the debug log is empty; nothing was checked")
		}
		if strings.Contains(logs.String(), wrong) || strings.Contains(logs.String(), token) {
			t.Errorf("the log shows a token:\n%s", logs.String())
		}
	})

	t.Run("explicit token", func(t *testing.T) {
		cleanTokenEnv(t)
		c, err := ray.NewClient(cl.DashboardURL, ray.WithToken(token))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := c.Version(ctx); err != nil || v.RayVersion == "" {
			t.Fatalf("Version with the token: %+v, %v", v, err)
		}
		submit(t, c)
	})

	t.Run("token path found", func(t *testing.T) {
		cleanTokenEnv(t)
		t.Setenv(ray.EnvAuthTokenPath, cl.AuthTokenPath())
		c, err := ray.NewClient(cl.DashboardURL)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := c.Version(ctx); err != nil || v.RayVersion == "" {
			t.Fatalf("Version with the token from %s: %+v, %v", ray.EnvAuthTokenPath, v, err)
		}
		submit(t, c)
	})

	t.Run("default token file found", func(t *testing.T) {
		home := cleanTokenEnv(t)
		if err := os.MkdirAll(filepath.Join(home, ".ray"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".ray", "auth_token"), []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ray.NewClient(cl.DashboardURL)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := c.Version(ctx); err != nil || v.RayVersion == "" {
			t.Fatalf("Version with the token from ~/.ray/auth_token: %+v, %v", v, err)
		}
		t.Setenv(ray.EnvAuthMode, "disabled")
		c, err = ray.NewClient(cl.DashboardURL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Version(ctx); !errors.Is(err, ray.ErrUnauthenticated) {
			t.Errorf("RAY_AUTH_MODE=disabled still sent the token file's token: %v", err)
		}
	})
}
