package kuberay_test

import (
	"errors"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/kuberay/kubesim"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// With WithClusterCheck(kubesim.Check), Apply on an existing RayCluster
// (Options.Cluster) asks the simulator's prediction of Ray's autoscaler
// before it creates the RayJob, on the real API server: a two-slice v4
// job on a cluster whose group is autoscaled to at most one slice is
// refused with MaxSlicesTooSmall, naming the cluster and the plan, and no
// RayJob exists; on a cluster whose group may grow to two it is applied;
// a cluster that does not exist is named. A RayJob that already exists
// for the plan is followed without a check.
func TestApplyChecksTheExistingCluster(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	ctx := t.Context()
	up := func(name string, maxSlices int) {
		t.Helper()
		sl, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2"}.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns,
			Autoscaling: &kuberay.Autoscaling{MinSlices: 0, MaxSlices: maxSlices}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Up(ctx, placement.NewSlicePlan(name, sl)); err != nil {
			t.Fatal(err)
		}
	}
	up("small", 1)
	up("large", 2)
	checked := func(cluster string) *kuberay.Backend {
		t.Helper()
		b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, Cluster: cluster}), kuberay.WithClusterCheck(kubesim.Check))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plan := compile(t, trainer("v4", "2x2x2", 2))
	jobs := func() int {
		t.Helper()
		var l rayv1.RayJobList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}

	_, err := checked("small").Apply(ctx, plan, "two-small")
	if err == nil || !strings.Contains(err.Error(), "RayCluster "+ns+"/small cannot run plan \""+plan.Name+"\"") || !strings.Contains(err.Error(), sim.CodeMaxSlicesTooSmall) {
		t.Errorf("two slices on a group of at most one: err = %v, want the cluster and plan named and MaxSlicesTooSmall", err)
	}
	if n := jobs(); n != 0 {
		t.Errorf("%d RayJobs after a refused Apply, want none", n)
	}

	job, err := checked("large").Apply(ctx, plan, "two-large")
	if err != nil {
		t.Fatalf("two slices on a group of at most two: %v", err)
	}
	if job.Spec.ClusterSelector[kuberay.ClusterSelectorKey] != "large" {
		t.Errorf("RayJob's clusterSelector %v, want cluster large", job.Spec.ClusterSelector)
	}

	_, err = checked("missing").Apply(ctx, plan, "two-missing")
	if err == nil || !strings.Contains(err.Error(), "reading RayCluster "+ns+"/missing") {
		t.Errorf("a cluster that does not exist: err = %v, want it named", err)
	}

	// The RayJob exists for this plan: Apply follows it, and a check that
	// would refuse now is not asked.
	refuse := errors.New("refused")
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, Cluster: "large"}),
		kuberay.WithClusterCheck(func(*kuberay.ClusterSlices, *placement.Plan) error { return refuse }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(ctx, plan, "two-large"); err != nil {
		t.Errorf("Apply again of the applied plan: %v, want the RayJob followed without a check", err)
	}
	if _, err := b.Apply(ctx, plan, "two-large-again"); !errors.Is(err, refuse) {
		t.Errorf("a new RayJob under a refusing check: err = %v, want the check's error", err)
	}
	if n := jobs(); n != 1 {
		t.Errorf("%d RayJobs, want only two-large", n)
	}
}
