package podrunner

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// phase is the pod's phase as the kubelet computes it from its
// containers.
func (w *worker) phase() corev1.PodPhase {
	for _, c := range w.inits {
		if c.final && c.state.Terminated != nil && c.state.Terminated.ExitCode != 0 {
			return corev1.PodFailed
		}
	}
	if !w.initDone {
		return corev1.PodPending
	}
	var running, restarting, succeeded, failed int
	for _, c := range w.ctrs {
		switch {
		case c.state.Running != nil:
			running++
		case c.final && c.state.Terminated.ExitCode == 0:
			succeeded++
		case c.final:
			failed++
		case c.restarts > 0:
			restarting++
		}
	}
	switch {
	case running > 0 || restarting > 0:
		return corev1.PodRunning
	case succeeded+failed == len(w.ctrs) && failed > 0:
		return corev1.PodFailed
	case succeeded == len(w.ctrs):
		return corev1.PodSucceeded
	}
	return corev1.PodPending
}

func (c *ctr) status(w *worker) corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name: c.spec.Name, Image: c.spec.Image, ImageID: "podrunner://" + w.r.venv,
		State: *c.state.DeepCopy(), LastTerminationState: *c.last.DeepCopy(),
		Ready: c.ready, RestartCount: c.restarts, Started: new(c.started),
	}
	if c.state.Running != nil || c.state.Terminated != nil {
		s.ContainerID = c.id(w)
	}
	return s
}

// podStatus is the pod's status now; old gives the conditions' previous
// transition times.
func (w *worker) podStatus(old *corev1.PodStatus) corev1.PodStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := corev1.PodStatus{Phase: w.phase(), HostIP: w.r.net.gw, HostIPs: []corev1.HostIP{{IP: w.r.net.gw}}, StartTime: &w.started, QOSClass: old.QOSClass}
	if ns := w.ns.Load(); ns != nil {
		st.PodIP, st.PodIPs = ns.ip, []corev1.PodIP{{IP: ns.ip}}
	}
	ready := w.initDone
	for _, c := range w.inits {
		st.InitContainerStatuses = append(st.InitContainerStatuses, c.status(w))
	}
	for _, c := range w.ctrs {
		st.ContainerStatuses = append(st.ContainerStatuses, c.status(w))
		ready = ready && c.ready
	}
	cond := func(t corev1.PodConditionType, ok bool) {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()}
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, c)
	}
	cond(corev1.PodScheduled, true)
	cond(corev1.PodReadyToStartContainers, w.ns.Load() != nil)
	cond(corev1.PodInitialized, w.initDone)
	cond(corev1.ContainersReady, ready)
	cond(corev1.PodReady, ready)
	return st
}

// writeStatus reports the pod's status whenever it changes, until ctx
// ends, and once more then.
func (w *worker) writeStatus(ctx context.Context) {
	for {
		select {
		case <-w.dirty:
		case <-ctx.Done():
			w.report(context.Background())
			return
		}
		w.report(ctx)
	}
}

func (w *worker) report(ctx context.Context) {
	w.mu.Lock()
	shutdown := w.shutdown
	w.mu.Unlock()
	if shutdown {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var pod corev1.Pod
		if err := w.r.reader.Get(ctx, client.ObjectKeyFromObject(w.pod), &pod); err != nil {
			return err
		}
		if pod.UID != w.pod.UID {
			return nil
		}
		pod.Status = w.podStatus(&pod.Status)
		return w.r.client.Status().Update(ctx, &pod)
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.r.logf("pod %s/%s: reporting status: %v", w.pod.Namespace, w.pod.Name, err)
	}
}
