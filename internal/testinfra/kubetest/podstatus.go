package kubetest

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podDriver stands in for the kubelet, which this control plane lacks: it
// reports every new pod Running and Ready with an IP, as a kubelet would
// once the containers started, and removes a pod being deleted, as a
// kubelet would once they stopped. It never touches a pod's spec.
type podDriver struct {
	c client.Client

	mu   sync.Mutex
	next int
}

func setupPodDriver(mgr ctrl.Manager) error {
	d := &podDriver{c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).Named("kubetest-pod-status").For(&corev1.Pod{}).Complete(d)
}

func (d *podDriver) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pod corev1.Pod
	if err := d.c.Get(ctx, req.NamespacedName, &pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.DeletionTimestamp != nil {
		err := d.c.Delete(ctx, &pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil
		}
		return ctrl.Result{}, err
	}
	if pod.Status.Phase == corev1.PodRunning {
		return ctrl.Result{}, nil
	}
	now := metav1.Now()
	ip := d.ip()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	pod.Status.HostIP = "192.0.2.1"
	pod.Status.StartTime = &now
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	err := d.c.Status().Update(ctx, &pod)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, err
}

// ip hands out addresses from 10.0.0.0/16 (TEST-NET would do, but KubeRay
// only reads the value).
func (d *podDriver) ip() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	return fmt.Sprintf("10.0.%d.%d", d.next/250, d.next%250+1)
}
