package podrunner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podReconciler is the kubelet (and the scheduler's binding step).
type podReconciler struct{ r *Runner }

func (p *podReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r := p.r
	var pod corev1.Pod
	err := r.cache.Get(ctx, req.NamespacedName, &pod)
	if apierrors.IsNotFound(err) {
		r.forget(req.NamespacedName, "")
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if pod.Spec.NodeName == "" {
		if wait := r.schedulingWait(&pod); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, r.unschedulable(ctx, &pod, "the node pool is provisioning a node for the pod")
		}
		return ctrl.Result{}, r.bind(ctx, &pod)
	}
	if !r.ours(pod.Spec.NodeName) {
		return ctrl.Result{}, nil
	}
	r.forget(req.NamespacedName, pod.UID) // an earlier pod of that name
	r.mu.Lock()
	w := r.workers[req.NamespacedName]
	r.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		grace := r.graceFor(pod.DeletionGracePeriodSeconds)
		if w == nil {
			return ctrl.Result{}, r.finalDelete(ctx, &pod)
		}
		r.mu.Lock()
		first := !w.deleting
		w.deleting = true
		r.mu.Unlock()
		if first {
			go func() {
				w.terminate(grace)
				r.remove(w)
				if err := r.finalDelete(context.Background(), w.pod); err != nil {
					r.logf("pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
				}
			}()
		}
		return ctrl.Result{}, nil
	}
	if w != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return ctrl.Result{}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return ctrl.Result{}, nil
	}
	host := 2
	for r.hosts[host] {
		host++
	}
	r.hosts[host] = true
	w = newWorker(r, &pod, host)
	wctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	r.workers[req.NamespacedName] = w
	go w.run(wctx)
	return ctrl.Result{}, nil
}

// finalDelete removes the pod from the API once its containers stopped,
// as the kubelet does.
func (r *Runner) finalDelete(ctx context.Context, pod *corev1.Pod) error {
	err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// forget stops the worker of a pod that is gone, or of an earlier pod of
// that name when uid is another pod's.
func (r *Runner) forget(key types.NamespacedName, uid types.UID) {
	r.mu.Lock()
	w := r.workers[key]
	if w == nil || w.pod.UID == uid || w.deleting {
		r.mu.Unlock()
		return
	}
	w.deleting = true
	r.mu.Unlock()
	go func() {
		w.terminate(0)
		r.remove(w)
	}()
}

func (r *Runner) remove(w *worker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := types.NamespacedName{Namespace: w.pod.Namespace, Name: w.pod.Name}
	if r.workers[key] == w {
		delete(r.workers, key)
	}
	delete(r.hosts, w.host)
	if err := os.RemoveAll(w.logDir()); err != nil {
		r.logf("pod %s/%s: removing its logs: %v", w.pod.Namespace, w.pod.Name, err)
	}
}

func (r *Runner) ours(node string) bool {
	for _, n := range r.nodes {
		if n.Name == node {
			return true
		}
	}
	return false
}

func (r *Runner) node(name string) Node {
	for _, n := range r.nodes {
		if n.Name == name {
			return n
		}
	}
	return Node{Name: name}
}

// bind binds a pod that names no node to the first node whose labels
// hold its nodeSelector, as the scheduler would (affinity, taints and
// resources are not weighed); a pod that fits no node stays Pending with
// PodScheduled False.
func (r *Runner) bind(ctx context.Context, pod *corev1.Pod) error {
	if s := pod.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName {
		return nil
	}
	for _, n := range r.nodes {
		fits := true
		for k, v := range pod.Spec.NodeSelector {
			fits = fits && n.Labels[k] == v
		}
		if !fits {
			continue
		}
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: n.Name}}
		err := r.client.SubResource("binding").Create(ctx, pod, b)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return r.unschedulable(ctx, pod, fmt.Sprintf("0/%d nodes are available: no node matches the pod's nodeSelector %v", len(r.nodes), pod.Spec.NodeSelector))
}

// unschedulable leaves the pod Pending with PodScheduled False and msg.
func (r *Runner) unschedulable(ctx context.Context, pod *corev1.Pod, msg string) error {
	if c := pod.Status.Conditions; len(c) == 1 && c[0].Type == corev1.PodScheduled && c[0].Message == msg {
		return nil
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, LastTransitionTime: metav1.Now()}}
	pod.Status.Phase = corev1.PodPending
	if err := r.client.Status().Update(ctx, pod); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// schedulingDelay holds the pods of a namespace that carry some labels
// unscheduled for d after their creation, or until until (Preempt).
type schedulingDelay struct {
	namespace string
	labels    map[string]string
	d         time.Duration
	until     time.Time
}

// DelayScheduling leaves every pod created in namespace with all of labels
// Pending, unschedulable, until d after its creation, as a cluster whose
// node pool must first provision a node for it (a GKE TPU node pool
// scaling up) does; then it is bound and runs. d = 0 removes the delay of
// the same namespace and labels. It is a fault beside the real control
// plane: the pods, KubeRay and Ray see a slow node, nothing else changes.
func (r *Runner) DelayScheduling(namespace string, labels map[string]string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delays = slices.DeleteFunc(r.delays, func(s schedulingDelay) bool {
		return s.namespace == namespace && maps.Equal(s.labels, labels)
	})
	if d > 0 {
		r.delays = append(r.delays, schedulingDelay{namespace: namespace, labels: maps.Clone(labels), d: d})
	}
}

// schedulingWait is how long the pod has still to wait to be scheduled.
func (r *Runner) schedulingWait(pod *corev1.Pod) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var wait time.Duration
	for _, s := range r.delays {
		match := s.namespace == pod.Namespace
		for k, v := range s.labels {
			match = match && pod.Labels[k] == v
		}
		switch {
		case match && !s.until.IsZero():
			wait = max(wait, time.Until(s.until))
		case match:
			wait = max(wait, time.Until(pod.CreationTimestamp.Add(s.d)))
		}
	}
	return wait
}

// createNodes creates the Node objects, Ready, with the bridge's address.
func (r *Runner) createNodes(ctx context.Context) error {
	r.nodes = r.opts.Nodes
	if len(r.nodes) == 0 {
		r.nodes = []Node{{Name: "podrunner"}}
	}
	for i, n := range r.nodes {
		l := maps.Clone(n.Labels)
		if l == nil {
			l = map[string]string{}
		}
		l[corev1.LabelHostname], l[corev1.LabelOSStable], l[corev1.LabelArchStable] = n.Name, "linux", runtime.GOARCH
		r.nodes[i].Labels = l
		if n.Capacity == nil {
			r.nodes[i].Capacity = hostCapacity()
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: l}}
		if err := r.client.Create(ctx, node); err != nil {
			return fmt.Errorf("podrunner: creating node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		node.Status = corev1.NodeStatus{
			Capacity: r.nodes[i].Capacity, Allocatable: r.nodes[i].Capacity,
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: r.net.gw}, {Type: corev1.NodeHostName, Address: n.Name}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
			NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: runtime.GOARCH, KubeletVersion: "podrunner"},
			// The apiserver reads pods' logs from here (logserver.go).
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(r.logs.port)}},
		}
		if err := r.client.Status().Update(ctx, node); err != nil {
			return fmt.Errorf("podrunner: reporting node %s: %w", n.Name, err)
		}
	}
	return nil
}

func (r *Runner) deleteNodes(ctx context.Context) error {
	var errs []error
	for _, n := range r.nodes {
		err := r.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hostCapacity is the machine's CPUs and memory.
func hostCapacity() corev1.ResourceList {
	mem := int64(8 << 30)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					mem = kb << 10
				}
			}
		}
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
}
