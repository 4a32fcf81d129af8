package raycluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

type proc struct {
	Name    string `json:"name"`
	IP      string `json:"ip"`
	PID     int    `json:"pid"`
	Dir     string `json:"dir"`
	Marker  string `json:"marker"`
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error

	// What spawn was called with, to start the node again.
	args     []string
	env      map[string]string
	sub      string
	detach   bool
	restarts int
}

// maxRestarts bounds how often Start starts a worker node again whose
// `ray start` exited: on a loaded 2-core machine a raylet can miss Ray's
// fixed 30 s registration deadline and abort, and a later start usually
// succeeds.
const maxRestarts = 4

const markerEnv = "RAYTPU_DEVCLUSTER"

// baseEnv is the parent environment less anything that would make a node
// think it is a TPU host or change where Ray puts things.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TPU_") || k == markerEnv || k == "RAY_ADDRESS" || k == "RAY_TMPDIR" ||
			k == envAuthMode || k == envAuthToken || k == envAuthTokenPath ||
			k == "JAX_PLATFORMS" || k == "XLA_FLAGS" || k == "VIRTUAL_ENV" || k == "PYTHONPATH" || k == "PYTHONHOME" || k == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (c *Cluster) spawn(ctx context.Context, name, ip, sub string, args []string, env map[string]string, detach bool) (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, errors.New("raycluster: cluster stopped")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := filepath.Join(c.tempDir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args = append(args, "--temp-dir="+dir)
	logf, err := os.OpenFile(filepath.Join(dir, "ray-start.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()

	marker := c.id + "/" + sub
	cmd := exec.Command(filepath.Join(c.venv, "bin", "ray"), args...)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.Stdout = logf
	cmd.Stderr = logf
	e := baseEnv()
	// Python's tempfile users (multiprocessing's pymp-* dirs in the
	// dashboard, job drivers) write under the cluster's dir, removed by Stop.
	tmp := filepath.Join(c.tempDir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	e = append(e,
		"TMPDIR="+tmp,
		"PATH="+filepath.Join(c.venv, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"VIRTUAL_ENV="+c.venv,
		"RAY_USAGE_STATS_ENABLED=0",
		// Ray's own settings for a loaded machine (Ray 2.60's names and
		// defaults): a worker process gets 180 s (default 60) to register
		// with its raylet, and `ray start` retries its first GCS connection
		// 60 times (default 20) before giving up. env may set them
		// otherwise. The raylet's 30 s registration wait has no setting;
		// nodes are paced instead (startlock.go).
		"RAY_worker_register_timeout_seconds=180",
		"RAY_NUM_REDIS_GET_RETRIES=60",
		// The head's `ray start` gives the dashboard 240 s (Ray's default
		// RAY_DASHBOARD_STARTUP_TIMEOUT_S is 60) to publish its address.
		"RAY_DASHBOARD_STARTUP_TIMEOUT_S=240",
		// Ray Train's controller polls its workers every
		// RAY_TRAIN_HEALTH_CHECK_INTERVAL_S (default 2 s), and a worker's
		// ray.train.report() returns only after the next poll took its
		// result: each report costs up to one interval. Local clusters run
		// short loops that report every step, so they poll every 0.5 s
		// (a 12-step run: 26 s of reports become 6 s). A poll that a
		// loaded machine answers late is not a failure: a worker is
		// declared dead only after RAY_TRAIN_WORKER_HEALTH_CHECK_TIMEOUT_S
		// (10 min) without an answer.
		"RAY_TRAIN_HEALTH_CHECK_INTERVAL_S=0.5",
		// The GCS checks each raylet every health_check_period_ms (Ray's
		// default 3000) and marks a node dead after
		// health_check_failure_threshold (5) failed checks in a row: a
		// killed host is DEAD after about 15 s. Checking every second
		// makes that 5 s. A raylet that is slow to answer is not
		// affected: a check fails only when it is refused or gets no
		// answer within health_check_timeout_ms (10 s, unchanged).
		"RAY_health_check_period_ms=1000",
		// A raylet prestarts idle Python workers, one per CPU, when the
		// first driver registers (prestart_worker_first_driver) and when
		// a lease's runtime_env asks (enable_worker_prestart), and the
		// driver's registration waits for them. On a machine that runs
		// many posing nodes those workers are CPU spent on processes
		// nobody leases yet; workers start on demand instead.
		"RAY_prestart_worker_first_driver=0",
		"RAY_enable_worker_prestart=0",
		// A raylet starts its workers at nice worker_niceness (Ray's
		// default 15), below its own processes, which on a machine of
		// its own keeps the raylet and the GCS ahead of busy tasks. A
		// local cluster shares its machine: every other process there
		// (a build, another test, anything at nice 0) then takes the
		// CPU from Ray's workers about 30 to 1, and the tasks, actors
		// and Serve replicas crawl (seen: a vLLM replica at 4% of a
		// core beside two busy processes, its start past 15 minutes).
		// Workers run at the niceness of everything else instead.
		"RAY_worker_niceness=0",
		// Each node's log monitor lists its log directory again on every
		// 0.1 s pass while the node has fewer than
		// RAY_LOG_MONITOR_MANY_FILES_THRESHOLD (1000) log files, and
		// every LOG_NAME_UPDATE_INTERVAL_S (0.5 s) past it. With the
		// threshold at 0 it lists every 0.5 s; new lines of known files
		// are still read every pass. Measured on an idle 6-node
		// cluster: the log monitors' CPU went from 3.7 to 1.4 s in 90 s.
		"RAY_LOG_MONITOR_MANY_FILES_THRESHOLD=0",
		// Each raylet reads the machine's memory use every
		// memory_monitor_refresh_ms (250 ms) to kill workers before the
		// kernel's OOM killer would; 0 turns the monitor off. Every posing
		// node would read the same machine, and no test relies on Ray's
		// OOM kills. Measured with BenchmarkIdleClusterCPU (a head and
		// five hosts, idle): the raylets' CPU went from 31.5–33.8 to 26.7
		// ms a second.
		"RAY_memory_monitor_refresh_ms=0",
		// Workers and actors inherit the raylet's environment. Ray code
		// that finds "the" cluster by itself (Ray Train's
		// PlacementGroupCleaner, for one) fails when several clusters
		// run on one machine unless RAY_ADDRESS names this one.
		"RAY_ADDRESS="+c.GCSAddress,
		markerEnv+"="+marker,
	)
	e = append(e, c.authEnv()...)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		e = append(e, k+"="+env[k])
	}
	cmd.Env = e
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("raycluster: start %s: %w", name, err)
	}
	p := &proc{Name: name, IP: ip, PID: cmd.Process.Pid, Dir: dir, Marker: marker, cmd: cmd, done: make(chan struct{}),
		args: args[:len(args)-1], env: env, sub: sub, detach: detach}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	c.procs = append(c.procs, p)
	return p, nil
}

// exited returns a node whose `ray start` exited, if any.
func (c *Cluster) exited() *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.done == nil {
			continue
		}
		select {
		case <-p.done:
			return p
		default:
		}
	}
	return nil
}

// restart starts worker p again, in a fresh temp dir on the same address,
// after its `ray start` exited, and returns the new process; nil when p is
// the head or out of restarts.
func (c *Cluster) restart(ctx context.Context, p *proc) (*proc, error) {
	c.mu.Lock()
	i := slices.Index(c.procs, p)
	c.mu.Unlock()
	if i <= 0 || p.restarts >= maxRestarts {
		return nil, nil
	}
	killAll([]int{p.PID}, func(m string) bool { return m == p.Marker })
	c.logger.Info("restarting ray worker whose ray start exited", "node", p.Name, "error", fmt.Sprint(p.waitErr), "log", tailFile(filepath.Join(p.Dir, "ray-start.log"), 3))
	np, err := c.spawn(ctx, p.Name, p.IP, p.sub+"r", p.args, p.env, p.detach)
	if err != nil {
		return nil, err
	}
	np.restarts = p.restarts + 1
	c.mu.Lock()
	// spawn appended np; put it in p's place so procs stay in node order.
	c.procs = c.procs[:len(c.procs)-1]
	c.procs[i] = np
	c.mu.Unlock()
	return np, nil
}
