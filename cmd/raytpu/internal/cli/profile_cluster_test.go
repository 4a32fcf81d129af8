package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// TestProfileTrainingOnRealRay trains on the posing v4 2x2x2 slice (two
// hosts, CPU JAX) with RunConfig.Profiler set, and while the workers run
// jitted steps captures 1.5 s of worker 0 and worker 1 with `raytpu
// profile`. Each file is a TensorBoard/XProf log dir entry holding a valid
// XSpace whose host plane has the jitted step's events, and JAX's own
// reader (jax.profiler.ProfileData) sees the same planes, lines and events.
// Then the run is let finish and must succeed.
func TestProfileTrainingOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	ctx := t.Context()
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	stop := filepath.Join(t.TempDir(), "stop")
	ready := t.TempDir()
	tr := train.JaxTrainer{
		TrainLoopPerWorker: "prof_loop:train_func",
		TrainLoopConfig:    map[string]any{"stop_file": stop, "max_s": 240, "ready_dir": ready},
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
		RunConfig: train.RunConfig{
			Name:        "profile-" + strings.ToLower(time.Now().Format("150405.000000")),
			StoragePath: t.TempDir(),
			WorkerEnv:   map[string]string{"JAX_PLATFORMS": "cpu"},
			Profiler:    &train.ProfilerConfig{},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "testdata/profile"},
	}
	plan, err := tr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := raybackend.New(client)
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Submit(ctx, plan, backend.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := client.JobLogs(context.Background(), id)
			t.Logf("driver log of %s:\n%s", id, log)
		}
		_, _ = client.StopJob(context.Background(), id)
	})

	// Both workers report their server once the group has started.
	servers := waitServers(t, client, id, 2)
	for i, s := range servers {
		if s.Rank != i || s.Port == 0 || s.IP == "" || s.NodeID == "" || s.Error != "" {
			t.Errorf("server %d = %+v, want rank %d with node, ip and port and no error", i, s, i)
		}
	}
	if servers[0].NodeID == servers[1].NodeID {
		t.Errorf("both workers report node %s; the slice has two hosts", servers[0].NodeID)
	}

	// A worker's server starts before its loop imports JAX and compiles
	// the step: capture once both have stepped.
	waitFiles(t, client, id, filepath.Join(ready, "ready-0"), filepath.Join(ready, "ready-1"))

	logdir := t.TempDir()
	const step = "PjitFunction(profiled_step)"
	for _, rank := range []string{"0", "1"} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(ctx, []string{"profile", "--address", c.DashboardURL, "--job", id, "--worker", rank, "--duration", "1500ms", "-o", logdir, "--run", "run1"}, &stdout, &stderr)
		if code != cli.ExitOK {
			t.Fatalf("raytpu profile --worker %s = %d\nstdout:\n%s\nstderr:\n%s", rank, code, stdout.String(), stderr.String())
		}
		t.Logf("raytpu profile --worker %s:\n%s", rank, stdout.String())
		path := filepath.Join(logdir, "plugins", "profile", "run1", "worker-"+rank+".xplane.pb")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the trace is not where TensorBoard looks: %v", err)
		}
		sum, err := profiler.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		host := sum.Plane("/host:CPU")
		if host == nil {
			t.Fatalf("%s has no /host:CPU plane: %+v", path, sum.Planes)
		}
		if host.Count(step) == 0 || host.Lines == 0 || host.EventMetadata == 0 || host.StatMetadata == 0 {
			t.Errorf("worker %s host plane: %d %q events, %d lines, %d event and %d stat metadata; want all > 0", rank, host.Count(step), step, host.Lines, host.EventMetadata, host.StatMetadata)
		}
		var want []xspaceCheck
		for _, p := range sum.Planes {
			want = append(want, xspaceCheck{Name: p.Name, Lines: p.Lines, Events: p.Events, Named: p.Count(step)})
		}
		if diff := cmp.Diff(want, readXSpaceWithJAX(t, path, step)); diff != "" {
			t.Errorf("jax.profiler.ProfileData reads %s differently (-raytpu +jax):\n%s", path, diff)
		}
	}

	// A rank that does not exist: the error lists the ranks there are.
	var stdout, stderr bytes.Buffer
	if code := cli.Main(ctx, []string{"profile", "--address", c.DashboardURL, "--job", id, "--worker", "7", "-o", logdir}, &stdout, &stderr); code != cli.ExitInvalid || !strings.Contains(stderr.String(), "0, 1") {
		t.Errorf("raytpu profile --worker 7 = %d, stderr %q; want exit %d listing workers 0, 1", code, stderr.String(), cli.ExitInvalid)
	}

	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := b.WaitRun(ctx, id, backend.RunOptions{})
	if err != nil || !out.Succeeded() {
		t.Fatalf("the profiled run ended %+v, %v; want SUCCEEDED", out, err)
	}
}

// TestProfileFixedPortOnRealRay trains with a train function that takes no
// config and a fixed profiler port on the posing slice, whose two hosts
// share this machine: one worker gets the port, the other finds it taken
// and trains without a server, and raytpu profile says so for that worker
// while it captures the other.
func TestProfileFixedPortOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	ctx := t.Context()
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	stop := filepath.Join(t.TempDir(), "stop")
	tr := train.JaxTrainer{
		TrainLoopPerWorker: "prof_loop:train_noarg",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
		RunConfig: train.RunConfig{
			Name:        "profile-fixed-" + strings.ToLower(time.Now().Format("150405.000000")),
			StoragePath: t.TempDir(),
			WorkerEnv:   map[string]string{"JAX_PLATFORMS": "cpu", "PROF_STOP_FILE": stop},
			Profiler:    &train.ProfilerConfig{Port: port},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "testdata/profile"},
	}
	plan, err := tr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := raybackend.New(client)
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Submit(ctx, plan, backend.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := client.JobLogs(context.Background(), id)
			t.Logf("driver log of %s:\n%s", id, log)
		}
		_, _ = client.StopJob(context.Background(), id)
	})
	servers := waitServers(t, client, id, 2)
	var ok, taken []profiler.Server
	for _, s := range servers {
		switch {
		case s.Error == "" && s.Port == port:
			ok = append(ok, s)
		case s.Port == 0 && (strings.Contains(s.Error, "another raytpu profiler server on this machine holds it") || strings.Contains(s.Error, "Address already in use")):
			taken = append(taken, s)
		}
	}
	if len(ok) != 1 || len(taken) != 1 {
		t.Fatalf("servers %+v: want one on port %d and one that found it taken", servers, port)
	}
	logdir := t.TempDir()
	run := func(rank int) (int, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Main(ctx, []string{"profile", "--address", c.DashboardURL, "--job", id, "--worker", strconv.Itoa(rank), "--duration", "1s", "-o", logdir}, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	if code, out := run(ok[0].Rank); code != cli.ExitOK {
		t.Errorf("raytpu profile --worker %d = %d:\n%s", ok[0].Rank, code, out)
	}
	if code, out := run(taken[0].Rank); code != cli.ExitInvalid || !strings.Contains(out, "did not start") {
		t.Errorf("raytpu profile --worker %d (no server) = %d:\n%s\nwant exit %d saying its server did not start", taken[0].Rank, code, out, cli.ExitInvalid)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := b.WaitRun(ctx, id, backend.RunOptions{})
	if err != nil || !out.Succeeded() {
		t.Fatalf("the run ended %+v, %v; want SUCCEEDED", out, err)
	}
}

// waitServers polls the job's log until n workers reported a profiler
// server.
func waitServers(t *testing.T, client *ray.Client, id string, n int) []profiler.Server {
	t.Helper()
	for deadline := time.Now().Add(4 * time.Minute); ; {
		log, err := client.JobLogs(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		servers := profiler.ServersFromLog(log)
		if len(servers) == n {
			return servers
		}
		if info, err := client.GetJob(t.Context(), id); err == nil && info.Status.Terminal() {
			t.Fatalf("job %s ended %s before its workers reported profiler servers", id, info.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 4m, %d of %d workers reported a profiler server: %+v", len(servers), n, servers)
		}
		time.Sleep(time.Second)
	}
}

// waitFiles waits until every path exists (written by the job's workers
// on this machine), failing when the job ends first.
func waitFiles(t *testing.T, client *ray.Client, id string, paths ...string) {
	t.Helper()
	for deadline := time.Now().Add(4 * time.Minute); ; {
		missing := slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
			_, err := os.Stat(p)
			return err == nil
		})
		if len(missing) == 0 {
			return
		}
		if info, err := client.GetJob(t.Context(), id); err == nil && info.Status.Terminal() {
			t.Fatalf("job %s ended %s before its workers wrote %v", id, info.Status, missing)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 4m, the workers have not written %v", missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// xspaceCheck is one plane as jax.profiler.ProfileData reads it.
type xspaceCheck struct {
	Name   string `json:"name"`
	Lines  int    `json:"lines"`
	Events int    `json:"events"`
	Named  int    `json:"named"`
}

func readXSpaceWithJAX(t *testing.T, path, event string) []xspaceCheck {
	t.Helper()
	script := filepath.Join(venvtest.RepoRoot(t), "profiler", "testdata", "xspace_check.py")
	b, err := exec.CommandContext(t.Context(), venvtest.Python(t), script, path, event).Output()
	if err != nil {
		t.Fatalf("xspace_check.py: %v", err)
	}
	var out []xspaceCheck
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("xspace_check.py printed %q: %v", b, err)
	}
	return out
}
