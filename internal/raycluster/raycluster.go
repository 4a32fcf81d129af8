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
//
// # Token authentication
//
// Config.TokenAuth starts every node with RAY_AUTH_MODE=token and
// RAY_AUTH_TOKEN_PATH naming a file under the cluster's temp dir, the
// switch Ray 2.60's `ray start` reads (it has no flag for it). The
// dashboard then answers 401 without "Authorization: Bearer <token>" and
// 403 with a wrong token; job drivers find the token through the inherited
// RAY_AUTH_TOKEN_PATH. Without TokenAuth nodes get RAY_AUTH_MODE=disabled,
// since `ray start` would otherwise turn authentication on whenever
// ~/.ray/auth_token exists.
package raycluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
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
	// else <repo root>/.venv when it exists, where the repo root is the
	// first directory holding go.mod at or above the working directory,
	// else the raytpu cache's virtualenv (package pyenv).
	Venv string
	// HeadCPUs is the head's --num-cpus. Default 2 (it hosts the dashboard
	// and the job drivers).
	HeadCPUs int
	// HeadResources and HeadLabels are added to the head node.
	HeadResources map[string]float64
	HeadLabels    map[string]string
	// HeadEnv is extra environment for the head node's processes (Ray's
	// workers and actors there, Serve's proxy among them, inherit it).
	HeadEnv map[string]string
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
	// StartTimeout bounds Start when ctx has no earlier deadline. Default
	// 8m: nodes start one at a time machine-wide (see startlock.go), so a
	// cluster may wait for the nodes of other clusters on a loaded machine.
	StartTimeout time.Duration
	// Detach lets the node processes outlive the Go process (for a CLI that
	// starts a cluster and stops it later from another process through
	// WriteState and LoadState). Without it every `ray start` gets SIGTERM
	// when the process that started it dies.
	Detach bool
	// Logger receives progress messages. Default: discard.
	Logger *slog.Logger
	// TokenAuth starts the cluster with Ray's token authentication on
	// (RAY_AUTH_MODE=token): every dashboard request but a few health
	// checks then needs "Authorization: Bearer <token>" (see
	// Cluster.AuthToken). Without it the cluster runs with
	// RAY_AUTH_MODE=disabled, whatever ~/.ray/auth_token holds.
	TokenAuth bool
	// AuthToken is the token when TokenAuth is set. Default: a fresh
	// random one (64 hex digits, as `ray get-auth-token --generate`).
	AuthToken string
	// TPUPlugins starts a TPU device-plugin emulator (package tpuplugin)
	// beside every worker posing as a TPU host and points its Ray at it
	// with TPU_DEVICE_PLUGIN_ADDR; see Cluster.TPUPlugin. With Detach it
	// needs PluginCommand.
	TPUPlugins bool
	// PluginCommand runs one emulator as a process of its own, for
	// TPUPlugins with Detach: it is started with the arguments --listen
	// <host:port> --config <tpuplugin.Config as JSON> --node-marker
	// <marker> appended and must call ServePlugin with them (the raytpu
	// command's hidden `dev-cluster tpu-plugin`). Such an emulator follows
	// the load of its node's workers, outlives the starting process like
	// the nodes, and is stopped with them; Cluster.TPUPlugin does not
	// return it.
	PluginCommand []string
}

// ErrNoRay is returned (wrapped) when the virtualenv or its ray binary is
// missing. Its message says how to create it.
var ErrNoRay = errors.New("raycluster: Ray is not installed: run scripts/setup-venv.sh (or make test) in a clone of raytpu, or `raytpu dev-cluster up`, which installs it into the raytpu cache on first use, or set RAYTPU_VENV to a virtualenv with Ray 2.60")

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
	// token authenticates dashboard requests when token auth is on;
	// tokenPath is the file nodes read it from.
	token, tokenPath string

	mu      sync.Mutex
	procs   []*proc // head first
	stopped bool
	obs     observability // metrics ports and TPU device-plugin emulators
}

// Start starts the head, then the workers one at a time (each under the
// machine-wide start lock, until its `ray start` reports the node started),
// and waits until every node is ALIVE with the expected resources and
// labels in the state API and listed in the dashboard's node summary (what
// `raytpu top` and the Serve diagnosis read), and until the Jobs API takes
// submissions: a POST /api/jobs/ without an entrypoint is refused by Ray's
// job module itself (see jobsprobe.go for why a status code alone, or a
// GET, does not tell). On failure it stops what it
// started and returns an error with the tail of the Ray logs.
//
// A head that does not come up is started again (maxHeadStarts), on fresh
// ports:
// Ray's `ray start --head` gives its raylet a fixed 30 s to register
// (ray/_private/node.py), which a loaded 2-core machine can miss; a worker
// node whose `ray start` exits is started again on the same address
// (maxRestarts), without giving up the cluster.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := start(ctx, cfg)
		var he *headError
		if !errors.As(err, &he) || ctx.Err() != nil || attempt == maxHeadStarts {
			return c, err
		}
		if cfg.Logger != nil {
			cfg.Logger.Warn("ray head did not come up; starting the cluster again on fresh ports", "attempt", attempt, "error", he.err)
		}
	}
}

// maxHeadStarts bounds how often Start starts a cluster whose head did not
// come up.
const maxHeadStarts = 3

// headError is a head that did not come up, which Start tries again.
type headError struct{ err error }

func (e *headError) Error() string { return e.err.Error() }
func (e *headError) Unwrap() error { return e.err }

func start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	venv, err := resolveVenv(cfg.Venv)
	if err != nil {
		return nil, err
	}
	if cfg, err = withDefaults(cfg); err != nil {
		return nil, err
	}
	var idb [6]byte
	_, _ = rand.Read(idb[:])
	c := &Cluster{id: hex.EncodeToString(idb[:]), venv: venv, logger: cfg.Logger}
	if err := c.makeTempDir(cfg.TempDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	if err := c.setupAuth(cfg); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	// A random 127.a.b.0/24 block per cluster.
	var ipb [2]byte
	_, _ = rand.Read(ipb[:])
	ipPrefix := fmt.Sprintf("127.%d.%d.", 1+int(ipb[0])%250, 1+int(ipb[1])%250)
	if err := c.startHeadNode(ctx, cfg, ipPrefix+"1"); err != nil {
		return nil, err
	}
	if cfg.Nodes, err = c.startPlugins(ctx, cfg, ipPrefix); err != nil {
		return nil, err
	}
	for i, n := range cfg.Nodes {
		if err := c.startWorkerNode(ctx, cfg, i, n, ipPrefix+strconv.Itoa(i+2)); err != nil {
			return nil, err
		}
	}
	if err := c.waitNodes(ctx, cfg); err != nil {
		return nil, c.startError("nodes did not come up", err)
	}
	if err := c.waitSummary(ctx, len(cfg.Nodes)+1, pluginChips(cfg, ipPrefix)); err != nil {
		return nil, c.startError("the dashboard's node summary is incomplete", err)
	}
	c.logger.Info("waiting for the Jobs API to take submissions", "dashboard", c.DashboardURL)
	if err := c.waitJobsAPI(ctx); err != nil {
		return nil, c.startError("the dashboard's Jobs API does not take submissions", err)
	}
	c.logger.Info("ray cluster ready", "nodes", len(cfg.Nodes)+1, "dashboard", c.DashboardURL)
	return c, nil
}

// withDefaults fills cfg's unset fields with their defaults and checks
// what must hold before anything starts.
func withDefaults(cfg Config) (Config, error) {
	if cfg.HeadCPUs <= 0 {
		cfg.HeadCPUs = 2
	}
	if cfg.ObjectStoreMemory <= 0 {
		cfg.ObjectStoreMemory = 80_000_000
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 8 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for i, n := range cfg.Nodes {
		if n.NumCPUs < 0 {
			return cfg, fmt.Errorf("raycluster: node %d (%s): NumCPUs %d < 0", i, n.Name, n.NumCPUs)
		}
	}
	if err := checkPlugins(cfg); err != nil {
		return cfg, err
	}
	if len(cfg.Nodes) > 250 {
		return cfg, fmt.Errorf("raycluster: %d nodes: at most 250", len(cfg.Nodes))
	}
	return cfg, nil
}

// makeTempDir makes the directory that holds every node's --temp-dir: dir
// when set, else a new one that Stop removes.
func (c *Cluster) makeTempDir(dir string) error {
	if dir == "" {
		base := os.TempDir()
		if len(base) > 20 {
			base = "/tmp"
		}
		d, err := os.MkdirTemp(base, "rtc")
		if err != nil {
			return fmt.Errorf("raycluster: temp dir: %w", err)
		}
		c.tempDir, c.ownTemp = d, true
	} else {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fmt.Errorf("raycluster: temp dir: %w", err)
		}
		c.tempDir = abs
	}
	// Ray's socket paths are <temp>/<node>/session_<date>_<time>_<us>_<pid>/sockets/plasma_store:
	// about 70 bytes past the temp dir, within the 107-byte unix socket limit.
	if len(c.tempDir) > 32 {
		if c.ownTemp {
			os.RemoveAll(c.tempDir)
		}
		return fmt.Errorf("raycluster: TempDir %q is %d bytes long; Ray's unix socket paths under it need it to be at most 32", c.tempDir, len(c.tempDir))
	}
	return nil
}

// startHeadNode starts the head on headIP, with the GCS, the dashboard,
// the Ray client server and the dashboard agent on free ports.
func (c *Cluster) startHeadNode(ctx context.Context, cfg Config, headIP string) error {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	gcsPort, dashPort, clientPort, agentPort := ports[0], ports[1], ports[2], ports[3]
	c.GCSAddress = net.JoinHostPort(headIP, strconv.Itoa(gcsPort))
	c.DashboardURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(dashPort))
	args := []string{
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
	args = append(args, commonArgs(cfg, cfg.HeadResources, cfg.HeadLabels)...)
	metricsArg, err := c.metricsPortArg("head", headIP)
	if err != nil {
		return err
	}
	args = append(args, metricsArg)
	c.logger.Info("starting ray head", "gcs", c.GCSAddress, "dashboard", c.DashboardURL, "temp_dir", c.tempDir)
	return c.startHead(ctx, headIP, args, cfg)
}

// startWorkerNode starts worker node i of cfg on ip.
func (c *Cluster) startWorkerNode(ctx context.Context, cfg Config, i int, n Node, ip string) error {
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
		return err
	}
	args := []string{
		"start", "--block",
		"--address=" + c.GCSAddress,
		"--node-ip-address=" + ip,
		"--dashboard-agent-listen-port=" + strconv.Itoa(port[0]),
		"--num-cpus=" + strconv.Itoa(ncpu),
	}
	args = append(args, commonArgs(cfg, n.Resources, n.Labels)...)
	metricsArg, err := c.metricsPortArg(name, ip)
	if err != nil {
		return err
	}
	args = append(args, metricsArg)
	c.logger.Info("starting ray worker", "node", name, "ip", ip)
	if err := c.startWorker(ctx, name, ip, "w"+strconv.Itoa(i), args, posingEnv(n), cfg.Detach); err != nil {
		return c.startError("node "+name+" did not come up", err)
	}
	return nil
}

// TempDir returns the directory holding every node's --temp-dir.
func (c *Cluster) TempDir() string { return c.tempDir }
