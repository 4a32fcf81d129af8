// Package raycluster starts a real, local Ray cluster for tests and for a
// development CLI: one head node plus worker nodes that can pose as TPU hosts.
//
// Every node is a `ray start --block` process from the project virtualenv
// (created by scripts/setup-venv.sh), started in its own process group, with
// its own --temp-dir and its own loopback address: a cluster picks a random
// 127.x.y.0/24 block, the head is 127.x.y.1 and worker i is 127.x.y.(i+2).
// (Ray rewrites --node-ip-address=127.0.0.1 to the machine's external
// address, but leaves other loopback addresses alone, so no traffic leaves
// the loopback interface.) All ports are picked free at start, so several
// clusters can run side by side. Stop kills every process the cluster
// started, found by process group and by a marker in their environment
// (Ray's job drivers run in sessions of their own), never with `ray stop`.
//
// # TPU posing
//
// A worker posing as a TPU host gets TPU_NAME, TPU_WORKER_ID,
// TPU_ACCELERATOR_TYPE and TPU_TOPOLOGY in its environment and
// --resources '{"TPU": chips}'. Verified on the installed Ray 2.60.0 for a
// v4-16 slice "slice-a" (topology 2x2x2, 2 hosts of 4 chips), each host gets
//
//	resources: TPU: 4, accelerator_type:TPU-V4: 1, slice-a: 1,
//	           TPU-v4-16-head: 1 (worker 0 only), CPU, memory,
//	           object_store_memory, node:<ip>: 1
//	labels:    ray.io/accelerator-type: TPU-V4, ray.io/tpu-slice-name: slice-a,
//	           ray.io/tpu-worker-id: 0|1, ray.io/tpu-pod-type: v4-16,
//	           ray.io/tpu-topology: 2x2x2, ray.io/node-id: <id>
//
// while the head (and any node without the TPU variables) gets only
// CPU, memory, object_store_memory, node:<ip> (plus node:__internal_head__
// on the head) and the single label ray.io/node-id. Labels passed with
// Node.Labels are added with --labels. No ray.io/tpu-subslice-* labels are
// set at node start (Ray computes those only from libtpu chip coordinates).
// Posing nodes also get JAX_PLATFORMS=cpu and
// XLA_FLAGS=--xla_force_host_platform_device_count=<chips> unless Env sets
// them, so JAX in their workers sees one CPU device per posed chip.
package raycluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/raytpu/raytpu/rayvocab"
)

// Node describes one worker node.
type Node struct {
	Name      string             // human name for logs, e.g. "slice-a/0"
	NumCPUs   int                // --num-cpus; 0 means 1
	Resources map[string]float64 // --resources, e.g. {"TPU": 4}
	Env       map[string]string  // extra environment, e.g. TPU_NAME, TPU_WORKER_ID
	Labels    map[string]string  // extra --labels
}

// Config describes a cluster. The zero value starts a head-only cluster.
type Config struct {
	// Venv is the virtualenv holding Ray. Default: $RAYTPU_VENV if set,
	// else <repo root>/.venv, where the repo root is the first directory
	// holding go.mod at or above the working directory.
	Venv string
	// HeadCPUs is the head's --num-cpus. Default 2 (it hosts the dashboard
	// and the job drivers).
	HeadCPUs int
	// HeadResources and HeadLabels are added to the head node.
	HeadResources map[string]float64
	HeadLabels    map[string]string
	// Nodes are the worker nodes.
	Nodes []Node
	// TempDir holds every node's --temp-dir and logs. Default: a fresh
	// directory under os.TempDir() (or /tmp when that path is long), removed
	// by Stop. A given TempDir is kept. It must be short: Ray puts unix
	// sockets under it.
	TempDir string
	// ObjectStoreMemory is each node's --object-store-memory in bytes.
	// Default 80 MB (Ray's minimum is 75 MiB).
	ObjectStoreMemory int64
	// StartTimeout bounds Start when ctx has no earlier deadline. Default 3m.
	StartTimeout time.Duration
	// Detach lets the node processes outlive the Go process (for a CLI that
	// starts a cluster and stops it later from another process through
	// WriteState and LoadState). Without it every `ray start` gets SIGTERM
	// when the process that started it dies.
	Detach bool
	// Logger receives progress messages. Default: discard.
	Logger *slog.Logger
}

// NodeInfo is a node as the Ray state API reports it.
type NodeInfo struct {
	NodeID    string             `json:"node_id"`
	IP        string             `json:"node_ip"`
	Name      string             `json:"node_name"`
	IsHead    bool               `json:"is_head_node"`
	State     string             `json:"state"`
	Resources map[string]float64 `json:"resources_total"`
	Labels    map[string]string  `json:"labels"`
}

// Alive reports whether the node's state is ALIVE.
func (n NodeInfo) Alive() bool { return n.State == "ALIVE" }

// ErrNoRay is returned (wrapped) when the virtualenv or its ray binary is
// missing. Its message says how to create it.
var ErrNoRay = errors.New("raycluster: Ray is not installed: run scripts/setup-venv.sh (or make test) from the repository root")

// Cluster is a running local cluster.
type Cluster struct {
	// GCSAddress is the head's GCS address (ray start --address).
	GCSAddress string
	// DashboardURL is the dashboard's base URL, e.g. http://127.0.0.1:8265.
	DashboardURL string

	id      string
	venv    string
	tempDir string
	ownTemp bool
	logger  *slog.Logger

	mu      sync.Mutex
	procs   []*proc // head first
	stopped bool
}

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
// fixed 30 s registration deadline and abort, and a second start usually
// succeeds.
const maxRestarts = 2

const markerEnv = "RAYTPU_DEVCLUSTER"

// Start starts the head, then the workers, and waits until every node is
// ALIVE with the expected resources and labels. On failure it stops what it
// started and returns an error with the tail of the Ray logs.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	venv, err := resolveVenv(cfg.Venv)
	if err != nil {
		return nil, err
	}
	if cfg.HeadCPUs <= 0 {
		cfg.HeadCPUs = 2
	}
	if cfg.ObjectStoreMemory <= 0 {
		cfg.ObjectStoreMemory = 80_000_000
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 3 * time.Minute
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for i, n := range cfg.Nodes {
		if n.NumCPUs < 0 {
			return nil, fmt.Errorf("raycluster: node %d (%s): NumCPUs %d < 0", i, n.Name, n.NumCPUs)
		}
	}
	if len(cfg.Nodes) > 250 {
		return nil, fmt.Errorf("raycluster: %d nodes: at most 250", len(cfg.Nodes))
	}

	var idb [6]byte
	_, _ = rand.Read(idb[:])
	c := &Cluster{id: hex.EncodeToString(idb[:]), venv: venv, logger: logger}
	if cfg.TempDir == "" {
		base := os.TempDir()
		if len(base) > 20 {
			base = "/tmp"
		}
		dir, err := os.MkdirTemp(base, "rtc")
		if err != nil {
			return nil, fmt.Errorf("raycluster: temp dir: %w", err)
		}
		c.tempDir, c.ownTemp = dir, true
	} else {
		abs, err := filepath.Abs(cfg.TempDir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("raycluster: temp dir: %w", err)
		}
		c.tempDir = abs
	}
	// Ray's socket paths are <temp>/<node>/session_<date>_<time>_<us>_<pid>/sockets/plasma_store:
	// about 70 bytes past the temp dir, within the 107-byte unix socket limit.
	if len(c.tempDir) > 32 {
		if c.ownTemp {
			os.RemoveAll(c.tempDir)
		}
		return nil, fmt.Errorf("raycluster: TempDir %q is %d bytes long; Ray's unix socket paths under it need it to be at most 32", c.tempDir, len(c.tempDir))
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()

	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	// A random 127.a.b.0/24 block per cluster.
	var ipb [2]byte
	_, _ = rand.Read(ipb[:])
	ipPrefix := fmt.Sprintf("127.%d.%d.", 1+int(ipb[0])%250, 1+int(ipb[1])%250)
	headIP := ipPrefix + "1"

	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	gcsPort, dashPort, clientPort, agentPort := ports[0], ports[1], ports[2], ports[3]
	c.GCSAddress = net.JoinHostPort(headIP, strconv.Itoa(gcsPort))
	c.DashboardURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(dashPort))

	headArgs := []string{
		"start", "--head", "--block",
		"--node-ip-address=" + headIP,
		"--port=" + strconv.Itoa(gcsPort),
		"--include-dashboard=true",
		"--dashboard-host=127.0.0.1",
		"--dashboard-port=" + strconv.Itoa(dashPort),
		"--ray-client-server-port=" + strconv.Itoa(clientPort),
		"--dashboard-agent-listen-port=" + strconv.Itoa(agentPort),
		"--num-cpus=" + strconv.Itoa(cfg.HeadCPUs),
	}
	headArgs = append(headArgs, commonArgs(cfg, cfg.HeadResources, cfg.HeadLabels)...)
	logger.Info("starting ray head", "gcs", c.GCSAddress, "dashboard", c.DashboardURL, "temp_dir", c.tempDir)
	if _, err := c.spawn(ctx, "head", headIP, "h", headArgs, nil, cfg.Detach); err != nil {
		return nil, err
	}
	if err := c.waitDashboard(ctx); err != nil {
		return nil, c.startError("head did not come up", err)
	}

	for i, n := range cfg.Nodes {
		name := n.Name
		if name == "" {
			name = "worker-" + strconv.Itoa(i)
		}
		ncpu := n.NumCPUs
		if ncpu == 0 {
			ncpu = 1
		}
		port, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		args := []string{
			"start", "--block",
			"--address=" + c.GCSAddress,
			"--node-ip-address=" + ipPrefix + strconv.Itoa(i+2),
			"--dashboard-agent-listen-port=" + strconv.Itoa(port[0]),
			"--num-cpus=" + strconv.Itoa(ncpu),
		}
		args = append(args, commonArgs(cfg, n.Resources, n.Labels)...)
		env := posingEnv(n)
		if i > 0 {
			// Stagger the raylets a little: all at once they can starve a
			// 2-core machine past Ray's registration deadline.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
		logger.Info("starting ray worker", "node", name, "ip", ipPrefix+strconv.Itoa(i+2))
		if _, err := c.spawn(ctx, name, ipPrefix+strconv.Itoa(i+2), "w"+strconv.Itoa(i), args, env, cfg.Detach); err != nil {
			return nil, err
		}
	}
	if err := c.waitNodes(ctx, cfg); err != nil {
		return nil, c.startError("nodes did not come up", err)
	}
	logger.Info("ray cluster ready", "nodes", len(cfg.Nodes)+1, "dashboard", c.DashboardURL)
	return c, nil
}

func commonArgs(cfg Config, res map[string]float64, labels map[string]string) []string {
	args := []string{
		"--object-store-memory=" + strconv.FormatInt(cfg.ObjectStoreMemory, 10),
		"--min-worker-port=0", "--max-worker-port=0",
		"--disable-usage-stats",
	}
	if len(res) > 0 {
		b, _ := json.Marshal(res)
		args = append(args, "--resources="+string(b))
	}
	if len(labels) > 0 {
		keys := slices.Sorted(maps.Keys(labels))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+labels[k])
		}
		args = append(args, "--labels="+strings.Join(parts, ","))
	}
	return args
}

// posingEnv adds JAX-on-CPU defaults to a node posing as a TPU host.
func posingEnv(n Node) map[string]string {
	env := maps.Clone(n.Env)
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env[rayvocab.EnvTPUName]; !ok {
		return env
	}
	if _, ok := env["JAX_PLATFORMS"]; !ok {
		env["JAX_PLATFORMS"] = "cpu"
	}
	if _, ok := env["XLA_FLAGS"]; !ok {
		if chips := n.Resources[rayvocab.ResourceTPU]; chips > 0 {
			env["XLA_FLAGS"] = fmt.Sprintf("--xla_force_host_platform_device_count=%d", int(chips))
		}
	}
	return env
}

// baseEnv is the parent environment less anything that would make a node
// think it is a TPU host or change where Ray puts things.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TPU_") || k == markerEnv || k == "RAY_ADDRESS" || k == "RAY_TMPDIR" ||
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
		// Workers and actors inherit the raylet's environment. Ray code
		// that finds "the" cluster by itself (Ray Train's
		// PlacementGroupCleaner, for one) fails when several clusters
		// run on one machine unless RAY_ADDRESS names this one.
		"RAY_ADDRESS="+c.GCSAddress,
		markerEnv+"="+marker,
	)
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

func (c *Cluster) waitDashboard(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if p := c.exited(); p != nil {
			return fmt.Errorf("ray start for %s exited: %v", p.Name, p.waitErr)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.DashboardURL+"/api/version", nil)
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dashboard %s not answering: %w", c.DashboardURL, ctx.Err())
		case <-tick.C:
		}
	}
}

// restart starts worker p again, in a fresh temp dir, after its `ray
// start` exited; it reports false when p is the head or out of restarts.
func (c *Cluster) restart(ctx context.Context, p *proc) (bool, error) {
	c.mu.Lock()
	i := slices.Index(c.procs, p)
	c.mu.Unlock()
	if i <= 0 || p.restarts >= maxRestarts {
		return false, nil
	}
	killAll([]int{p.PID}, func(m string) bool { return m == p.Marker })
	c.logger.Info("restarting ray worker whose ray start exited", "node", p.Name, "error", fmt.Sprint(p.waitErr), "log", tailFile(filepath.Join(p.Dir, "ray-start.log"), 3))
	np, err := c.spawn(ctx, p.Name, p.IP, p.sub+"r", p.args, p.env, p.detach)
	if err != nil {
		return false, err
	}
	np.restarts = p.restarts + 1
	c.mu.Lock()
	// spawn appended np; put it in p's place so procs stay in node order.
	c.procs = c.procs[:len(c.procs)-1]
	c.procs[i] = np
	c.mu.Unlock()
	return true, nil
}

func (c *Cluster) waitNodes(ctx context.Context, cfg Config) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if p := c.exited(); p != nil {
			restarted, err := c.restart(ctx, p)
			if err != nil {
				return err
			}
			if !restarted {
				return fmt.Errorf("ray start for %s exited: %v", p.Name, p.waitErr)
			}
			continue
		}
		nodes, err := c.Nodes(ctx)
		if err != nil {
			last = err.Error()
		} else if msg := c.checkNodes(cfg, nodes); msg != "" {
			last = msg
		} else {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %s", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// checkNodes returns "" when every node is ALIVE with what cfg asked for.
func (c *Cluster) checkNodes(cfg Config, nodes []NodeInfo) string {
	byIP := map[string]NodeInfo{}
	for _, n := range nodes {
		if n.Alive() {
			byIP[n.IP] = n
		}
	}
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	for i, p := range procs {
		n, ok := byIP[p.IP]
		if !ok {
			return fmt.Sprintf("node %s (%s) not ALIVE yet", p.Name, p.IP)
		}
		var wantCPU int
		var res map[string]float64
		var labels map[string]string
		var env map[string]string
		if i == 0 {
			wantCPU, res, labels = cfg.HeadCPUs, cfg.HeadResources, cfg.HeadLabels
		} else {
			nd := cfg.Nodes[i-1]
			wantCPU, res, labels, env = max(nd.NumCPUs, 1), nd.Resources, nd.Labels, nd.Env
		}
		if got := n.Resources[rayvocab.ResourceCPU]; got != float64(wantCPU) {
			return fmt.Sprintf("node %s: CPU %v, want %d", p.Name, got, wantCPU)
		}
		for k, v := range res {
			if got := n.Resources[k]; got != v {
				return fmt.Sprintf("node %s: resource %s = %v, want %v", p.Name, k, got, v)
			}
		}
		for k, v := range labels {
			if got := n.Labels[k]; got != v {
				return fmt.Sprintf("node %s: label %s = %q, want %q", p.Name, k, got, v)
			}
		}
		if name := env[rayvocab.EnvTPUName]; name != "" {
			if got := n.Labels[rayvocab.LabelTPUSliceName]; got != name {
				return fmt.Sprintf("node %s: label ray.io/tpu-slice-name = %q, want %q", p.Name, got, name)
			}
		}
	}
	return ""
}

func (c *Cluster) startError(what string, err error) error {
	return fmt.Errorf("raycluster: %s: %w\n%s", what, err, c.LogTail(20))
}

// LogTail returns the last lines of each node's `ray start` output and of
// every non-empty Ray *.err log, for error messages.
func (c *Cluster) LogTail(lines int) string {
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	var b strings.Builder
	for _, p := range procs {
		files := []string{filepath.Join(p.Dir, "ray-start.log")}
		errs, _ := filepath.Glob(filepath.Join(p.Dir, "session_*", "logs", "*.err"))
		sort.Strings(errs)
		for _, f := range errs {
			if !strings.Contains(f, "session_latest") {
				files = append(files, f)
			}
		}
		for _, f := range files {
			t := tailFile(f, lines)
			if strings.TrimSpace(t) == "" {
				continue
			}
			fmt.Fprintf(&b, "--- %s: %s\n%s", p.Name, f, t)
			if !strings.HasSuffix(t, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	var ring []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		ring = append(ring, sc.Text())
		if len(ring) > n {
			ring = ring[1:]
		}
	}
	return strings.Join(ring, "\n")
}

// Nodes lists the cluster's nodes (dead ones included) from the dashboard's
// state API.
func (c *Cluster) Nodes(ctx context.Context) ([]NodeInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.DashboardURL+"/api/v0/nodes?detail=1&limit=1000", nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("raycluster: list nodes: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 512)]))
	}
	var out struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Result []NodeInfo `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	if !out.Result {
		return nil, fmt.Errorf("raycluster: list nodes: %s", out.Msg)
	}
	nodes := out.Data.Result.Result
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].IsHead != nodes[j].IsHead {
			return nodes[i].IsHead
		}
		return nodes[i].IP < nodes[j].IP
	})
	return nodes, nil
}

// NodeIP returns the loopback address of the named node ("head" for the
// head, else Node.Name or "worker-<i>").
func (c *Cluster) NodeIP(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.Name == name {
			return p.IP, true
		}
	}
	return "", false
}

// Python returns the virtualenv's python.
func (c *Cluster) Python() string { return filepath.Join(c.venv, "bin", "python") }

// Venv returns the virtualenv directory.
func (c *Cluster) Venv() string { return c.venv }

// TempDir returns the directory holding every node's --temp-dir.
func (c *Cluster) TempDir() string { return c.tempDir }

// KillNode kills every process of the named worker node with SIGKILL, the
// way a host dies. The head cannot be killed this way; use Stop.
func (c *Cluster) KillNode(name string) error {
	c.mu.Lock()
	var p *proc
	for _, q := range c.procs[min(1, len(c.procs)):] {
		if q.Name == name {
			p = q
		}
	}
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("raycluster: no worker node %q", name)
	}
	killAll([]int{p.PID}, func(m string) bool { return m == p.Marker })
	if p.done != nil {
		<-p.done
	}
	return nil
}

// Processes returns the pids of every live process that belongs to the
// cluster (found by the environment marker every node is started with).
func (c *Cluster) Processes() []int {
	return markedPIDs(func(m string) bool { return strings.HasPrefix(m, c.id+"/") })
}

// Stop kills every process the cluster started (by process group, then by
// environment marker, so job drivers in their own sessions go too), waits
// for them to exit, and removes the temp dir if Start created it. It is safe
// to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	procs := slices.Clone(c.procs)
	c.mu.Unlock()

	pids := make([]int, 0, len(procs))
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	left := killAll(pids, func(m string) bool { return strings.HasPrefix(m, c.id+"/") })
	for _, p := range procs {
		if p.done != nil {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
	}
	var err error
	if len(left) > 0 {
		err = fmt.Errorf("raycluster: processes still alive after stop: %v", left)
	}
	if c.ownTemp {
		if rerr := os.RemoveAll(c.tempDir); rerr != nil && err == nil {
			err = rerr
		}
	}
	c.logger.Info("ray cluster stopped", "dashboard", c.DashboardURL)
	return err
}

// killAll sends SIGKILL to the process groups led by roots, to their
// descendants and to every process whose marker matches, repeating until
// none is left (or 15s pass). It returns the pids still alive.
func killAll(roots []int, match func(marker string) bool) []int {
	deadline := time.Now().Add(15 * time.Second)
	for {
		targets := map[int]bool{}
		for _, pid := range roots {
			if alive(pid) {
				targets[pid] = true
			}
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		for _, pid := range descendants(roots) {
			targets[pid] = true
		}
		for _, pid := range markedPIDs(match) {
			targets[pid] = true
		}
		if len(targets) == 0 {
			return nil
		}
		for pid := range targets {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return slices.Sorted(maps.Keys(targets))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, st := parseStat(b)
	return st != "Z" && st != ""
}

func parseStat(b []byte) (ppid int, state string) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// descendants lists the live descendants of roots.
func descendants(roots []int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		ppid, st := parseStat(b)
		if st == "Z" {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, ch := range children[p] {
			out = append(out, ch)
			queue = append(queue, ch)
		}
	}
	return out
}

// markedPIDs lists live processes whose environment holds a marker that
// match accepts.
func markedPIDs(match func(string) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	prefix := []byte(markerEnv + "=")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(b, prefix) {
			continue
		}
		for kv := range bytes.SplitSeq(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && match(string(v)) && alive(pid) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("raycluster: pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// RepoRoot returns the first directory holding go.mod at or above the
// working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("raycluster: no go.mod above the working directory")
		}
		dir = parent
	}
}

func resolveVenv(venv string) (string, error) {
	if venv == "" {
		if v := os.Getenv("RAYTPU_VENV"); v != "" {
			venv = v
		} else {
			root, err := RepoRoot()
			if err != nil {
				return "", fmt.Errorf("%w (%v)", ErrNoRay, err)
			}
			venv = filepath.Join(root, ".venv")
		}
	}
	venv, err := filepath.Abs(venv)
	if err != nil {
		return "", err
	}
	for _, bin := range []string{"python", "ray"} {
		if _, err := os.Stat(filepath.Join(venv, "bin", bin)); err != nil {
			return "", fmt.Errorf("%w; %s is missing from virtualenv %s", ErrNoRay, filepath.Join("bin", bin), venv)
		}
	}
	return venv, nil
}

// TPUNodes builds the worker nodes of one slice: hosts nodes named
// "<slice>/<i>" with TPU_WORKER_ID i, chipsPerHost TPU and cpus CPUs each.
// podType is Ray's pod type (e.g. "v4-16"), topology e.g. "2x2x2".
func TPUNodes(sliceName, podType, topology string, hosts, chipsPerHost, cpus int) []Node {
	nodes := make([]Node, 0, hosts)
	for i := range hosts {
		nodes = append(nodes, Node{
			Name:      fmt.Sprintf("%s/%d", sliceName, i),
			NumCPUs:   cpus,
			Resources: map[string]float64{rayvocab.ResourceTPU: float64(chipsPerHost)},
			Env:       rayvocab.HostEnv(sliceName, i, podType, topology),
		})
	}
	return nodes
}
