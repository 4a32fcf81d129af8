package kuberay_test

import (
	"errors"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// slicePlan reserves n v6e 4x4 slices and runs nothing.
func slicePlan(t *testing.T, name string, n int) *placement.Plan {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: n}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return placement.NewSlicePlan(name, g)
}

func TestRenderCluster(t *testing.T) {
	t.Parallel()
	rc, err := kuberay.RenderCluster(slicePlan(t, "reserve", 2), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	y, err := kuberay.MarshalYAML(rc)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "cluster-v6e-4x4-two-slices.golden.yaml", y)
	if _, err := kuberay.RenderCluster(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{}); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("a JaxTrainer plan: %v, want ErrUnsupported", err)
	}
	long := "a-name-that-runs-past-the-fifty-three-characters-of-kuberay"
	rc.WithName(long)
	if got := fields(kuberay.ValidateCluster(rc)); len(got) != 1 || got[0] != "metadata.name" {
		t.Errorf("a %d-character RayCluster name: %v, want metadata.name", len(long), got)
	}
}

// A slice plan brought up as a plain RayCluster on the real operator: two
// v6e 4x4 slices become 8 worker pods that the pod-status driver reports
// ready, so KubeRay reports the cluster ready. Up again changes nothing;
// Down deletes only what raytpu created. (Without a garbage collector in
// this control plane the deleted RayCluster's pods stay; on a real cluster
// they are owned by it and go with it.)
func TestUpDown(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	plan := slicePlan(t, "reserve", 2)
	rc, err := b.Up(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	var seen []kuberay.ClusterStatus
	st, err := b.WaitCluster(t.Context(), "reserve", func(s kuberay.ClusterStatus) { seen = append(seen, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || st.DesiredWorkers != 8 || st.ReadyWorkers != 8 || len(seen) == 0 {
		t.Errorf("WaitCluster = %+v after %d statuses, want ready with 8 of 8 workers", st, len(seen))
	}
	if n := countPods(t, env, ns, rc.Name); n != 9 {
		t.Errorf("%d pods, want 1 head and 8 workers", n)
	}
	again, err := b.Up(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if again.UID != rc.UID || again.Generation != rc.Generation {
		t.Errorf("Up of the same plan: uid %s gen %d, want %s gen %d", again.UID, again.Generation, rc.UID, rc.Generation)
	}

	foreign := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}, Spec: *again.Spec.DeepCopy()}
	if err := env.Client.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	if err := b.Down(t.Context(), "theirs"); !errors.Is(err, kuberay.ErrNotManaged) {
		t.Errorf("Down of a RayCluster raytpu did not create: %v, want ErrNotManaged", err)
	}
	if _, err := b.Up(t.Context(), slicePlan(t, "theirs", 1)); !errors.Is(err, kuberay.ErrNotManaged) {
		t.Errorf("Up over a RayCluster raytpu did not create: %v, want ErrNotManaged", err)
	}
	if err := b.Down(t.Context(), "reserve"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the RayCluster gone", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "reserve"}, &rayv1.RayCluster{})
		return client.IgnoreNotFound(err) == nil && err != nil, "still there"
	})
	if err := b.Down(t.Context(), "reserve"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second Down: %v, want ErrNotFound", err)
	}
	var left rayv1.RayCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "theirs"}, &left); err != nil || left.Spec.WorkerGroupSpecs[0].NumOfHosts != 4 {
		t.Errorf("the foreign RayCluster after Down and Up: %v", err)
	}
}
