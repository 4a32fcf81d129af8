package kuberay

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfields "k8s.io/apimachinery/pkg/fields"

	"github.com/raytpu/raytpu/backend"
)

// warningEvents returns the last few distinct Warning events recorded
// against an object ("Reason: message", oldest first), which say why
// KubeRay failed it. The operator records events asynchronously, so a
// failure seen before its event is read again for up to grace. Nil when
// the backend has no Kubernetes client or the events cannot be read.
func (b *Backend) warningEvents(ctx context.Context, kind, name string, grace time.Duration) []string {
	if b.kube == nil {
		return nil
	}
	sel := k8sfields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "type": corev1.EventTypeWarning}.String()
	deadline := time.Now().Add(grace)
	for {
		list, err := b.kube.CoreV1().Events(b.opts.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return nil
		}
		if len(list.Items) > 0 || time.Now().After(deadline) {
			return summarize(list.Items)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func summarize(evs []corev1.Event) []string {
	last := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	slices.SortStableFunc(evs, func(a, b corev1.Event) int { return last(a).Compare(last(b)) })
	var out []string
	for _, e := range evs {
		s := e.Reason + ": " + strings.TrimSpace(e.Message)
		out = slices.DeleteFunc(out, func(x string) bool { return x == s })
		out = append(out, s)
	}
	if len(out) > 3 {
		out = out[len(out)-3:]
	}
	return out
}

// withEvents returns a copy of st whose message ends with the Warning
// events KubeRay recorded against the object, the why of a failed or
// stuck RayService.
func (b *Backend) withEvents(ctx context.Context, st *backend.ServiceStatus, kind, name string) *backend.ServiceStatus {
	evs := b.failureEvents(ctx, kind, name)
	if evs == "" {
		return st
	}
	out := *st
	if out.Message != "" {
		out.Message += "; "
	}
	out.Message += evs
	return &out
}

// clusterEvents is the "; events: ..." tail of a RayCluster error, or "".
func (b *Backend) clusterEvents(ctx context.Context, name string) string {
	if evs := b.failureEvents(ctx, KindRayCluster, name); evs != "" {
		return "; " + evs
	}
	return ""
}

// failureEvents is "events: A; B" for the object's Warning events, or "".
// It reads them even when ctx has ended (the wait's deadline is often what
// brought the caller here), for at most 5s.
func (b *Backend) failureEvents(ctx context.Context, kind, name string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	evs := b.warningEvents(ctx, kind, name, time.Second)
	if len(evs) == 0 {
		return ""
	}
	return "events: " + strings.Join(evs, "; ")
}
