package kuberay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/rayruntime"
)

// submitterContainer is the container of the Job KubeRay creates to submit
// a RayJob (submission mode K8sJobMode): `ray job submit --no-wait`, then
// `ray job logs --follow`, so its log holds the driver's.
const submitterContainer = "ray-job-submitter"

// labelJobName is the label Kubernetes' Job controller puts on a Job's
// pods; KubeRay names the submitter Job after its RayJob.
const labelJobName = "batch.kubernetes.io/job-name"

// outputWait bounds how long jobOutput waits for the launcher's result to
// reach the submitter's log after KubeRay reports the RayJob finished
// (`ray job logs --follow` may still be draining).
const outputWait = 30 * time.Second

// jobOutput reads the launcher's outcome line (rayruntime.ParseResult) from
// the log of RayJob name's submitter pods (pods/log through the apiserver,
// as kubectl logs reads it), newest pod first. It returns nil, nil when no
// pod's log holds one: no Kubernetes client (NewWithClient without
// WithKubeClient), the submitter's pods are gone, or the launcher never
// reported.
func (b *Backend) jobOutput(ctx context.Context, name string) (json.RawMessage, error) {
	if b.kube == nil {
		return nil, nil
	}
	deadline := time.Now().Add(outputWait)
	for {
		out, running, err := b.submitterOutput(ctx, name)
		if out != nil || err != nil || !running || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// submitterOutput is one pass of jobOutput; running says whether a
// submitter pod still runs (its log may still grow).
func (b *Backend) submitterOutput(ctx context.Context, name string) (json.RawMessage, bool, error) {
	pods, err := b.kube.CoreV1().Pods(b.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelJobName + "=" + name})
	if err != nil {
		return nil, false, fmt.Errorf("kuberay: listing the submitter pods of RayJob %s/%s: %w", b.opts.Namespace, name, err)
	}
	items := pods.Items
	slices.SortFunc(items, func(a, c corev1.Pod) int { return c.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	var running bool
	for _, p := range items {
		running = running || p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending
		logs, err := b.kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: submitterContainer}).DoRaw(ctx)
		if err != nil {
			b.logger.DebugContext(ctx, "kuberay: reading the submitter's log", "pod", p.Name, "error", err.Error())
			continue
		}
		out, err := rayruntime.ParseResult(string(logs))
		if errors.Is(err, rayruntime.ErrNoResult) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("kuberay: the launcher's result in pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return out, false, nil
	}
	return nil, running, nil
}
