package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
)

// TestKubeLinksGolden: what apply prints about each kind of object.
func TestKubeLinksGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for _, ref := range []kuberay.Ref{
		{Kind: kuberay.KindRayJob, Namespace: "ml", Name: "train"},
		{Kind: kuberay.KindRayService, Namespace: "ml", Name: "chat"},
		{Kind: kuberay.KindRayCluster, Namespace: "ml", Name: "t"},
	} {
		printKubeLinks(&b, ref)
	}
	golden.Assert(t, "apply-links.txt", b.Bytes())
}

// TestClusterProgressGolden renders a RayCluster wait with a fixed clock:
// provisioning, worker pods becoming ready, ready.
func TestClusterProgressGolden(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	p := progress.New(&b, progress.WithTerminal(false), progress.WithClock(func() time.Time { return now }))
	for _, s := range []struct {
		after time.Duration
		cs    kuberay.ClusterStatus
	}{
		{0, kuberay.ClusterStatus{Name: "t", DesiredWorkers: 2, Message: "HeadPodReady=False HeadPodNotFound"}},
		{4 * time.Second, kuberay.ClusterStatus{Name: "t", DesiredWorkers: 2}},
		{3 * time.Second, kuberay.ClusterStatus{Name: "t", ReadyWorkers: 1, DesiredWorkers: 2}},
		{2 * time.Second, kuberay.ClusterStatus{Name: "t", State: "ready", Ready: true, ReadyWorkers: 2, DesiredWorkers: 2}},
	} {
		now = now.Add(s.after)
		showClusterStatus(p, s.cs)
	}
	p.Done("ready")
	golden.Assert(t, "apply-wait-cluster-plain.txt", b.Bytes())
}
