package kuberay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/raytpu/raytpu/backend"
)

// ErrClusterFailed means KubeRay reports a RayCluster failed.
var ErrClusterFailed = errors.New("the RayCluster failed")

// ClusterStatus is what KubeRay reports about a RayCluster.
type ClusterStatus struct {
	// Name of the RayCluster.
	Name string `json:"name"`
	// State is KubeRay's: "" while it provisions, "ready", "failed",
	// "suspended".
	State string `json:"state"`
	// Ready is true once the head and every desired worker pod are ready.
	Ready bool `json:"ready"`
	// ReadyWorkers and DesiredWorkers count worker pods (hosts).
	ReadyWorkers   int `json:"readyWorkers"`
	DesiredWorkers int `json:"desiredWorkers"`
	// Message is KubeRay's reason and the conditions that are not True.
	Message string `json:"message,omitempty"`
}

// clusterStatusOf reads a RayCluster's status.
func clusterStatusOf(rc *rayv1.RayCluster) ClusterStatus {
	s := rc.Status
	st := ClusterStatus{Name: rc.Name, State: string(s.State), Ready: s.State == rayv1.Ready,
		ReadyWorkers: int(s.ReadyWorkerReplicas), DesiredWorkers: int(s.DesiredWorkerReplicas)}
	var parts []string
	if s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	for _, c := range s.Conditions {
		if c.Status != "True" && c.Type != string(rayv1.RayClusterSuspending) && c.Type != string(rayv1.RayClusterSuspended) && c.Type != string(rayv1.RayClusterReplicaFailure) {
			parts = append(parts, c.Type+"="+string(c.Status)+" "+c.Reason)
		}
	}
	if c := meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterReplicaFailure)); c != nil && c.Status == "True" {
		parts = append(parts, "ReplicaFailure "+c.Reason+": "+c.Message)
	}
	st.Message = strings.Join(parts, "; ")
	return st
}

// WaitCluster watches RayCluster NameFor(name) until KubeRay reports
// it ready, calling onStatus (if set) with every status that differs from
// the one before. A RayCluster KubeRay reports failed is an error matching
// ErrClusterFailed; a deleted one matches backend.ErrNotFound. While a
// queued RayCluster (Options.Queue) stays suspended, the Message says why
// Kueue keeps it waiting ("queued by Kueue: ClusterQueue ..., needs 8
// google.com/tpu, 8 in use"), read at each change of the RayCluster.
func (b *Backend) WaitCluster(ctx context.Context, name string, onStatus func(ClusterStatus)) (ClusterStatus, error) {
	if err := b.usable(ctx); err != nil {
		return ClusterStatus{}, err
	}
	ns, n := b.opts.Namespace, NameFor(name)
	lw := cache.NewListWatchFromClient(b.client.RayV1().RESTClient(), "rayclusters", ns, fields.OneTermEqualSelector("metadata.name", n))
	var last ClusterStatus
	first := true
	_, err := watchtools.UntilWithSync(ctx, lw, &rayv1.RayCluster{}, nil, func(ev watch.Event) (bool, error) {
		rc, ok := ev.Object.(*rayv1.RayCluster)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("kuberay: RayCluster %s/%s was deleted: %w", ns, n, backend.ErrNotFound)
		}
		st := clusterStatusOf(rc)
		if _, ok := rc.Labels[labelQueueName]; ok && rc.Spec.Suspend != nil && *rc.Spec.Suspend {
			// Queued (Options.Queue): say why Kueue keeps it suspended.
			st.Message = b.queueMessage(ctx, rc.Namespace, rc.UID, rc.Labels[labelQueueName])
		}
		if first || st != last {
			first, last = false, st
			if onStatus != nil {
				onStatus(st)
			}
		}
		return st.Ready || rc.Status.State == rayv1.Failed, nil
	})
	if err != nil {
		return last, fmt.Errorf("kuberay: following RayCluster %s/%s (last seen %q %s%s): %w", ns, n, last.State, last.Message, b.clusterEvents(ctx, n), err)
	}
	if !last.Ready {
		return last, fmt.Errorf("kuberay: RayCluster %s/%s: %w: %s%s", ns, n, ErrClusterFailed, last.Message, b.clusterEvents(ctx, n))
	}
	return last, nil
}
