package podrunner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ctr is the kubelet's view of one container.
type ctr struct {
	spec     *corev1.Container
	state    corev1.ContainerState
	last     corev1.ContainerState
	restarts int32
	ready    bool
	started  bool
	final    bool // exited and will not restart
}

// worker runs one pod: its network namespace, volumes, init containers in
// order, then its containers with their probes and restarts.
type worker struct {
	r        *Runner
	pod      *corev1.Pod
	host     int                   // last byte of the pod IP
	ns       atomic.Pointer[netns] // set once by setup; read by the status, DNS and probe code
	root     string
	volPaths map[string]string
	cancel   context.CancelFunc
	done     chan struct{}
	dirty    chan struct{}
	started  metav1.Time

	etcMu    sync.Mutex // serializes writeEtc
	mu       sync.Mutex
	inits    []*ctr
	ctrs     []*ctr
	initDone bool
	grace    time.Duration
	deleting bool
	// shutdown is set when the node shuts down under the pod (Preempt):
	// the worker's last status report is left to the node's.
	shutdown bool
}

func newWorker(r *Runner, pod *corev1.Pod, host int) *worker {
	w := &worker{r: r, pod: pod.DeepCopy(), host: host, done: make(chan struct{}), dirty: make(chan struct{}, 1), started: metav1.Now(),
		root: filepath.Join(r.dir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))}
	for i := range w.pod.Spec.InitContainers {
		w.inits = append(w.inits, &ctr{spec: &w.pod.Spec.InitContainers[i], state: waiting("PodInitializing", "")})
	}
	for i := range w.pod.Spec.Containers {
		w.ctrs = append(w.ctrs, &ctr{spec: &w.pod.Spec.Containers[i], state: waiting("ContainerCreating", "")})
	}
	return w
}

func waiting(reason, msg string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

func (w *worker) home() string            { return filepath.Join(w.root, "home") }
func (w *worker) node() Node              { return w.r.node(w.pod.Spec.NodeName) }
func (w *worker) logPath(c string) string { return filepath.Join(w.logDir(), c+".log") }

// logDir holds the pod's container logs. It is outside the pod's root,
// which teardown removes when the containers end: as on a kubelet, the
// logs of a finished pod stay readable until the pod is deleted.
func (w *worker) logDir() string { return filepath.Join(w.r.dir, "logs", filepath.Base(w.root)) }

func (w *worker) container(name string) *corev1.Container {
	for i := range w.pod.Spec.Containers {
		if w.pod.Spec.Containers[i].Name == name {
			return &w.pod.Spec.Containers[i]
		}
	}
	return nil
}

// changed asks the status writer to report the pod's status.
func (w *worker) changed() {
	select {
	case w.dirty <- struct{}{}:
	default:
	}
}

// run is the pod's life until ctx ends (the pod is deleted) or every
// container exited for good.
func (w *worker) run(ctx context.Context) {
	defer close(w.done)
	statusCtx, stopStatus := context.WithCancel(context.WithoutCancel(ctx))
	statusDone := make(chan struct{})
	go func() { defer close(statusDone); w.writeStatus(statusCtx) }()
	defer func() {
		w.changed()
		stopStatus()
		<-statusDone
		w.teardown()
	}()
	if err := w.setup(ctx); err != nil {
		w.wait("CreateContainerConfigError", err)
		<-ctx.Done()
		return
	}
	// As a kubelet does, a volume whose ConfigMap or Secret is not there
	// yet (an object written just after the pod, or not yet in the
	// runner's cache) is retried until it is, the pod ContainerCreating
	// meanwhile.
	for delay := 250 * time.Millisecond; ; delay = min(2*delay, 4*time.Second) {
		err := w.volumes(ctx)
		if err == nil {
			break
		}
		w.wait("ContainerCreating", fmt.Errorf("MountVolume.SetUp failed: %w", err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
	w.changed()
	for _, c := range w.inits {
		if w.keep(ctx, c, true) != 0 {
			return // deleted, or failed for good (restartPolicy Never)
		}
	}
	w.mu.Lock()
	w.initDone = true
	w.mu.Unlock()
	w.changed()
	var wg sync.WaitGroup
	for _, c := range w.ctrs {
		wg.Go(func() { w.keep(ctx, c, false) })
	}
	wg.Wait()
}

// wait reports every container of the pod waiting for reason.
func (w *worker) wait(reason string, err error) {
	w.mu.Lock()
	for _, c := range append(w.inits, w.ctrs...) {
		c.state = waiting(reason, err.Error())
	}
	w.mu.Unlock()
	w.r.logf("pod %s/%s: %s: %v", w.pod.Namespace, w.pod.Name, reason, err)
	w.changed()
}

// setup makes the pod's directories and network namespace; run then
// materialises its volumes.
func (w *worker) setup(ctx context.Context) error {
	for _, d := range []string{w.home(), w.logDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	ns, err := w.r.net.add(ctx, w.host, w.host)
	if err != nil {
		return err
	}
	w.ns.Store(ns)
	return w.writeEtc()
}

// writeEtc writes the pod's hosts and resolv.conf from the runner's
// current Service records. The worker (at setup) and the DNS reconciler
// (on every change) both call it; etcMu makes the last writer write the
// latest records.
func (w *worker) writeEtc() error {
	w.etcMu.Lock()
	defer w.etcMu.Unlock()
	ns := w.ns.Load()
	if ns == nil {
		return nil
	}
	w.r.mu.Lock()
	recs := w.r.records
	w.r.mu.Unlock()
	return writeEtc(ns.etcDir(), hostsFile(w.pod.Name, w.pod.Namespace, ns.ip, recs), resolvConf(w.pod.Namespace))
}

// teardown removes the namespace and the pod's directory.
func (w *worker) teardown() {
	var errs []error
	// Under etcMu, and forgotten: a DNS rewrite racing the teardown (the
	// pod's deletion changes the records) must not recreate the
	// namespace's /etc/netns directory once it is removed.
	w.etcMu.Lock()
	if ns := w.ns.Swap(nil); ns != nil {
		errs = append(errs, ns.remove(context.Background()))
	}
	w.etcMu.Unlock()
	errs = append(errs, os.RemoveAll(w.root))
	if err := errors.Join(errs...); err != nil {
		w.r.logf("pod %s/%s: teardown: %v", w.pod.Namespace, w.pod.Name, err)
	}
}

// terminate stops the pod's containers, SIGKILL after grace, and waits
// for the worker to finish.
func (w *worker) terminate(grace time.Duration) {
	w.mu.Lock()
	w.grace = grace
	w.mu.Unlock()
	w.cancel()
	<-w.done
}

// keep runs c until it exits for good or ctx ends, restarting it as the
// pod's restartPolicy says, and returns its last exit code (an init
// container that must not be retried, or -1 when ctx ended).
func (w *worker) keep(ctx context.Context, c *ctr, init bool) int {
	policy := w.pod.Spec.RestartPolicy
	for {
		p, err := w.start(ctx, c.spec)
		if err != nil {
			w.set(c, func() { c.state = waiting("CreateContainerError", err.Error()) })
			if !w.backoff(ctx, c) {
				return -1
			}
			continue
		}
		started := metav1.Now()
		w.set(c, func() {
			c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
			c.started, c.ready = true, !init && c.spec.ReadinessProbe == nil
		})
		pctx, stopProbes := context.WithCancel(ctx)
		if !init {
			w.probes(pctx, c, p)
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			w.mu.Lock()
			grace := w.grace
			w.mu.Unlock()
			if err := p.stop(grace); err != nil {
				w.r.logf("pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
			}
		}
		stopProbes()
		reason := "Completed"
		if p.exit != 0 {
			reason = "Error"
		}
		w.set(c, func() {
			c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: int32(p.exit), Reason: reason, StartedAt: started, FinishedAt: metav1.Now(),
				ContainerID: c.id(w)}}
			c.started, c.ready = false, false
		})
		if ctx.Err() != nil {
			return -1
		}
		restart := policy == corev1.RestartPolicyAlways && !init ||
			policy != corev1.RestartPolicyNever && p.exit != 0
		if !restart {
			w.set(c, func() { c.final = true })
			return p.exit
		}
		if !w.backoff(ctx, c) {
			return -1
		}
	}
}

func (c *ctr) id(w *worker) string {
	return fmt.Sprintf("podrunner://%s/%s/%d", w.pod.UID, c.spec.Name, c.restarts)
}

// backoff waits before a restart: RestartBackoff doubled per restart, at
// most 5 minutes (the kubelet's CrashLoopBackOff).
func (w *worker) backoff(ctx context.Context, c *ctr) bool {
	w.mu.Lock()
	d := w.r.opts.RestartBackoff << min(c.restarts, 5)
	d = min(d, 5*time.Minute)
	c.last, c.restarts = c.state, c.restarts+1
	if c.last.Terminated != nil {
		c.state = waiting("CrashLoopBackOff", fmt.Sprintf("back-off %v restarting failed container %s", d, c.spec.Name))
	}
	w.mu.Unlock()
	w.changed()
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// probes starts c's readiness and liveness probes against run p.
func (w *worker) probes(ctx context.Context, c *ctr, p *proc) {
	if pr := c.spec.ReadinessProbe; pr != nil {
		go w.prober(ctx, c.spec, p, pr, "Readiness", func(ok bool, msg string) {
			w.set(c, func() { c.ready = ok })
			if !ok {
				w.r.logf("pod %s/%s container %s: %s", w.pod.Namespace, w.pod.Name, c.spec.Name, msg)
			}
		})
	}
	if pr := c.spec.LivenessProbe; pr != nil {
		go w.prober(ctx, c.spec, p, pr, "Liveness", func(ok bool, msg string) {
			if ok {
				return
			}
			w.r.logf("pod %s/%s container %s: %s; killing it", w.pod.Namespace, w.pod.Name, c.spec.Name, msg)
			w.mu.Lock()
			grace := w.r.graceFor(w.pod.Spec.TerminationGracePeriodSeconds)
			w.mu.Unlock()
			go p.stop(grace)
		})
	}
}

func (w *worker) set(c *ctr, f func()) {
	w.mu.Lock()
	f()
	w.mu.Unlock()
	w.changed()
}
