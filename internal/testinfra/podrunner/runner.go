package podrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options configure a Runner. The zero value is ready to use.
type Options struct {
	// Venv is the virtualenv that stands in for every container image.
	// Optional. Default: $RAYTPU_VENV, else <repo>/.venv, else the raytpu
	// cache's (see raycluster.FindVenv).
	Venv string
	// Root is the directory under which the runner keeps its pods'
	// directories (in <Root>/kpr-<pid>). It must not be under /tmp, which
	// each container replaces with its own. Optional. Default: /var/tmp.
	Root string
	// Nodes are the runner's nodes, created as Node objects. Optional.
	// Default: one node named "podrunner" with no extra labels.
	Nodes []Node
	// MaxGrace caps the grace period between SIGTERM and SIGKILL when a
	// pod is deleted or a liveness probe fails (a pod's own is 30s by
	// default, and a container init without a SIGTERM handler waits all
	// of it). Optional. Default: 5s.
	MaxGrace time.Duration
	// RestartBackoff is the first delay before a container restarts,
	// doubled per restart up to 5 minutes. Optional. Default: 10s, the
	// kubelet's.
	RestartBackoff time.Duration
	// Logger receives the runner's events. Optional. Default: silent.
	Logger *slog.Logger
	// Network is the pods' network, made by NewNetwork before the control
	// plane so that its serving certificate names Network.Gateway; the
	// runner owns it from Start on. Optional. Default: Start makes one.
	Network *Network
	// ImageEnv is added to every container's environment as its image's
	// would be (a container's env and envFrom override it): what a node
	// of a real cluster gives every pod without the pod asking, such as
	// the GCS emulator's address that stands in for GKE's object storage
	// and its workload identity (see kubetest.WithObjectStorage).
	// Optional.
	ImageEnv []corev1.EnvVar
}

// Node is one node of the runner. Every node shares the runner's bridge,
// and its IP is the bridge's address.
type Node struct {
	// Name is the Node object's name.
	Name string
	// Labels are added to kubernetes.io/hostname and kubernetes.io/os.
	Labels map[string]string
	// Capacity is the node's capacity and allocatable. Optional.
	// Default: the host's CPUs and memory, 110 pods.
	Capacity corev1.ResourceList
}

// Runner does for a control plane without nodes what kubelets, a CNI
// plugin, cluster DNS and a scheduler's binding do: see the package doc.
type Runner struct {
	opts   Options
	venv   string
	dir    string
	tools  tools
	net    *network
	logs   *logServer
	api    *apiProxy
	nodes  []Node
	client client.Client // cached reads
	reader client.Reader // direct reads
	cache  client.Reader
	cancel context.CancelFunc
	mgrErr chan error

	mu      sync.Mutex
	delays  []schedulingDelay
	workers map[types.NamespacedName]*worker
	hosts   map[int]bool
	records []record
	stopped bool
}

// Start starts a runner on the control plane cfg reaches: it removes what
// dead runners left (CleanupStale), makes its bridge and Node objects and
// starts watching pods. Stop releases everything.
func Start(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, opts Options) (_ *Runner, err error) {
	// The runner owns a network it is given even when it fails to start:
	// Stop removes it once it is r.net, this before.
	given := opts.Network
	defer func() {
		if err != nil && given != nil {
			err = errors.Join(err, given.Close(context.WithoutCancel(ctx)))
		}
	}()
	if os.Geteuid() != 0 {
		return nil, errors.New("podrunner: must run as root (network namespaces, veths and mounts)")
	}
	if opts.Root == "" {
		opts.Root = "/var/tmp"
	}
	if opts.MaxGrace == 0 {
		opts.MaxGrace = 5 * time.Second
	}
	if opts.RestartBackoff == 0 {
		opts.RestartBackoff = 10 * time.Second
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	if root == "/tmp" || strings.HasPrefix(root, "/tmp/") {
		return nil, fmt.Errorf("podrunner: Root %s is under /tmp, which every container replaces with its own", root)
	}
	r := &Runner{opts: opts, workers: map[types.NamespacedName]*worker{}, hosts: map[int]bool{}, mgrErr: make(chan error, 1)}
	if r.venv, err = raycluster.FindVenv(opts.Venv); err != nil {
		return nil, fmt.Errorf("podrunner: %w", err)
	}
	// Each container mounts a private /tmp: a venv reached through a path
	// under /tmp (a clone in /tmp links .venv to the raytpu cache) would
	// vanish inside it, so containers get the venv's real path.
	if real, err := filepath.EvalSymlinks(r.venv); err == nil {
		r.venv = real
	}
	if r.venv == "/tmp" || strings.HasPrefix(r.venv, "/tmp/") {
		return nil, fmt.Errorf("podrunner: the virtualenv %s is under /tmp, which every container replaces with its own, so no pod would find ray: put it elsewhere (RAYTPU_CACHE, RAYTPU_VENV)", r.venv)
	}
	if r.tools, err = findTools(); err != nil {
		return nil, err
	}
	if err := CleanupStale(ctx, root); err != nil {
		return nil, fmt.Errorf("podrunner: removing what earlier runners left: %w", err)
	}
	r.dir = filepath.Join(root, fmt.Sprintf("%s-%d", Prefix, os.Getpid()))
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	if opts.Network != nil {
		r.net, given = opts.Network.n, nil
	} else if r.net, err = newNetwork(ctx); err != nil {
		return nil, err
	}
	if r.logs, err = startLogServer(r, r.net.gw); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	target, err := apiTarget(cfg.Host)
	if err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	if r.api, err = startAPIProxy(r.net.gw, target); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	if err := r.startManager(ctx, cfg, scheme); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	return r, nil
}

func findTools() (tools, error) {
	var t tools
	var missing []string
	for _, f := range []struct {
		name string
		dst  *string
	}{{"ip", &t.ip}, {"unshare", &t.unshare}, {"nsenter", &t.nsenter}, {"mount", &t.mount}, {"chroot", &t.chroot},
		{"hostname", &t.hostname}, {"mkdir", &t.mkdir}, {"touch", &t.touch}, {"ln", &t.ln}, {"chmod", &t.chmod}} {
		p, err := exec.LookPath(f.name)
		if err != nil {
			missing = append(missing, f.name)
		}
		*f.dst = p
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("podrunner: %s not found on PATH: install iproute2 and util-linux (apt-get install iproute2 util-linux)", strings.Join(missing, ", "))
	}
	return t, nil
}

// ManagerOptions are the options of every controller-runtime manager of a
// test control plane (the operator's, the runner's): no metrics or health
// listener, and controller names that may repeat, since tests in one
// process may run several managers.
func ManagerOptions(scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

func (r *Runner) startManager(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) error {
	mgr, err := ctrl.NewManager(cfg, ManagerOptions(scheme))
	if err != nil {
		return fmt.Errorf("podrunner: creating the manager: %w", err)
	}
	r.client, r.cache, r.reader = mgr.GetClient(), mgr.GetCache(), mgr.GetAPIReader()
	if err := r.createNodes(ctx); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("podrunner-kubelet").For(&corev1.Pod{}).Complete(&podReconciler{r: r}); err != nil {
		return err
	}
	if err := setupDNS(mgr, r); err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go func() { r.mgrErr <- mgr.Start(mctx) }()
	sync, stop := context.WithTimeout(ctx, 3*time.Minute)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(sync) {
		return errors.New("podrunner: the caches did not sync within 3m")
	}
	return nil
}

// Stop kills every pod's processes, removes their namespaces, the bridge,
// the Node objects and the runner's directory. Pods stay in the API as
// they were (their node is gone). It is safe to call more than once.
func (r *Runner) Stop() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	ws := make([]*worker, 0, len(r.workers))
	for _, w := range r.workers {
		ws = append(ws, w)
	}
	r.mu.Unlock()
	var errs []error
	if r.cancel != nil {
		r.cancel()
		if err := <-r.mgrErr; err != nil {
			errs = append(errs, err)
		}
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() { w.terminate(0) })
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r.client != nil {
		errs = append(errs, r.deleteNodes(ctx))
	}
	if r.logs != nil {
		errs = append(errs, r.logs.close())
	}
	if r.api != nil {
		errs = append(errs, r.api.close())
	}
	if r.net != nil {
		errs = append(errs, r.net.close(ctx))
	}
	errs = append(errs, os.RemoveAll(r.dir))
	return errors.Join(errs...)
}

func (r *Runner) logf(format string, args ...any) {
	if r.opts.Logger != nil {
		r.opts.Logger.Info(fmt.Sprintf(format, args...))
	}
}

func (r *Runner) graceFor(secs *int64) time.Duration {
	g := 30 * time.Second
	if secs != nil {
		g = time.Duration(*secs) * time.Second
	}
	return min(g, r.opts.MaxGrace)
}

// Logs returns what container of pod namespace/name wrote so far (its
// stdout and stderr, every run of it), while the pod runs.
func (r *Runner) Logs(namespace, name, container string) (string, error) {
	r.mu.Lock()
	w := r.workers[types.NamespacedName{Namespace: namespace, Name: name}]
	r.mu.Unlock()
	if w == nil {
		return "", fmt.Errorf("podrunner: no running pod %s/%s", namespace, name)
	}
	b, err := os.ReadFile(w.logPath(container))
	return string(b), err
}

// PIDs returns the host pids of every process that runs in pod
// namespace/name's network namespace (all its containers), or nil.
func (r *Runner) PIDs(ctx context.Context, namespace, name string) ([]int, error) {
	r.mu.Lock()
	w := r.workers[types.NamespacedName{Namespace: namespace, Name: name}]
	r.mu.Unlock()
	if w == nil {
		return nil, nil
	}
	ns := w.ns.Load()
	if ns == nil {
		return nil, nil
	}
	return netnsPIDs(ctx, ns.name), nil
}

// Gateway is the bridge's address: every node's IP and, on APIServerPort,
// the pods' route to the API server (KUBERNETES_SERVICE_HOST).
func (r *Runner) Gateway() string { return r.net.gw }
