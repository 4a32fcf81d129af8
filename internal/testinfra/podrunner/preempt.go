package podrunner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GKE's graceful node shutdown on a Spot VM (and a flex-start or
// preemptible one): the VM stops 30 s after the preemption notice, and the
// kubelet gives the pods that are not system-critical the first 15 s of it
// (terminationGracePeriodSeconds beyond that has no effect), then marks
// them Failed with this reason and message.
const (
	SpotGrace             = 15 * time.Second
	nodeShutdownReason    = "Terminated"
	nodeShutdownMessage   = "Pod was terminated in response to imminent node shutdown."
	nodeShutdownCondition = "TerminationByKubelet"
)

// Preemption is what Preempt did: the pods it took, when the SIGTERM went
// out, when the last process was gone and the pods were deleted, and when
// the capacity comes back.
type Preemption struct {
	// Pods are the preempted pods' names, sorted.
	Pods []string
	// Signalled is when every pod's containers got SIGTERM (at once);
	// Stopped when the last of them had exited (after at most the grace
	// period and SIGKILL); Deleted when the pods were gone from the API.
	Signalled, Stopped, Deleted time.Time
	// Back is when pods with the same labels may be scheduled again.
	Back time.Time
}

// Preempt does to the running pods of namespace that carry all of labels
// what GKE does when it reclaims the node pool of a spot or flex-start
// TPU slice (select a slice by KubeRay's ray.io/cluster, ray.io/group and
// ray.io/worker-group-replica-index labels): every pod's containers get
// SIGTERM at the same moment and SIGKILL after grace (SpotGrace is GKE's);
// then each pod is reported Failed, reason Terminated, with the
// DisruptionTarget condition the kubelet's graceful node shutdown sets,
// and deleted from the API, as the pod garbage collector deletes the pods
// of a node that is gone.
//
// Nodes: the runner's one node of a TPU shape holds every host of every
// slice of that shape (see TPUNode), so no Node object goes NotReady or
// away; the node pool's absence is modelled by its capacity: pods created
// with the same labels (the replacements KubeRay creates) stay Pending,
// unschedulable, until down after the SIGTERM, as while GKE recreates the
// node pool; then they are bound and run. Preempt returns once the pods
// are deleted (about grace after the call), or with an error when no
// running pod matches.
func (r *Runner) Preempt(ctx context.Context, namespace string, labels map[string]string, grace, down time.Duration) (*Preemption, error) {
	if len(labels) == 0 {
		return nil, errors.New("podrunner: Preempt: no labels; pass the labels of one slice's pods (ray.io/group and ray.io/worker-group-replica-index)")
	}
	var list corev1.PodList
	if err := r.reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var ws []*worker
	r.mu.Lock()
	for _, p := range list.Items {
		w := r.workers[client.ObjectKeyFromObject(&p)]
		if w == nil || w.deleting || w.pod.UID != p.UID || p.DeletionTimestamp != nil {
			continue
		}
		w.deleting = true
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		r.mu.Unlock()
		return nil, fmt.Errorf("podrunner: Preempt: no running pod in namespace %s with labels %v", namespace, labels)
	}
	out := &Preemption{Signalled: time.Now()}
	out.Back = out.Signalled.Add(down)
	// Before any pod is gone, so that no replacement slips through.
	r.delays = append(r.delays, schedulingDelay{namespace: namespace, labels: maps.Clone(labels), until: out.Back})
	r.mu.Unlock()
	for _, w := range ws {
		out.Pods = append(out.Pods, w.pod.Name)
	}
	slices.Sort(out.Pods)
	r.logf("preempting pods %v of namespace %s: SIGTERM now, SIGKILL after %v; capacity back in %v", out.Pods, namespace, grace, down)
	for _, w := range ws {
		w.mu.Lock()
		w.shutdown = true
		w.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() { w.terminate(grace) })
	}
	wg.Wait()
	out.Stopped = time.Now()
	errs := make([]error, len(ws))
	for i, w := range ws {
		wg.Go(func() {
			errs[i] = r.shutDown(context.WithoutCancel(ctx), w)
			r.remove(w)
		})
	}
	wg.Wait()
	out.Deleted = time.Now()
	return out, errors.Join(errs...)
}

// shutDown reports w's pod Failed as the kubelet's graceful node shutdown
// does, then deletes it.
func (r *Runner) shutDown(ctx context.Context, w *worker) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pod corev1.Pod
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(w.pod), &pod); err != nil {
			return err
		}
		if pod.UID != w.pod.UID {
			return nil
		}
		now := metav1.Now()
		pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, nodeShutdownReason, nodeShutdownMessage
		pod.Status.Conditions = slices.DeleteFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget })
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: nodeShutdownCondition, Message: nodeShutdownMessage, LastTransitionTime: now})
		for i := range pod.Status.Conditions {
			if t := pod.Status.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				pod.Status.Conditions[i].Status, pod.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, now
			}
		}
		return r.client.Status().Update(ctx, &pod)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("podrunner: reporting pod %s/%s shut down: %w", w.pod.Namespace, w.pod.Name, err)
	}
	return r.finalDelete(ctx, w.pod)
}
