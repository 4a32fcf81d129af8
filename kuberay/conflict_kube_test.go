package kuberay_test

import (
	"errors"
	"testing"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// Someone takes over the worker groups of a RayCluster raytpu created
// (kubectl apply --server-side --force-conflicts under their own manager);
// raytpu's next apply of a changed plan does not force: it comes back as a
// *ConflictError naming the field and its owner, and the object keeps the
// other manager's change.
func TestApplyConflictNamesTheField(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Up(t.Context(), slicePlan(t, "contested", 2)); err != nil {
		t.Fatal(err)
	}
	theirs, err := kuberay.RenderCluster(slicePlan(t, "contested", 3), kuberay.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rayclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mine := rayv1ac.RayCluster("contested", ns).WithSpec(rayv1ac.RayClusterSpec().WithWorkerGroupSpecs(&theirs.Spec.WorkerGroupSpecs[0]))
	if _, err := c.RayV1().RayClusters(ns).Apply(t.Context(), mine, metav1.ApplyOptions{FieldManager: "platform-admin", Force: true}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Up(t.Context(), slicePlan(t, "contested", 1))
	var ce *kuberay.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, kuberay.ErrConflict) || !apierrors.IsConflict(err) {
		t.Fatalf("Up of a changed plan over another manager's fields: %v, want a *ConflictError", err)
	}
	if len(ce.Conflicts) != 1 || ce.Conflicts[0].Field != ".spec.workerGroupSpecs" || ce.Conflicts[0].Manager != "platform-admin" || ce.Kind != "RayCluster" {
		t.Errorf("conflicts %+v of %s, want .spec.workerGroupSpecs owned by platform-admin", ce.Conflicts, ce.Kind)
	}
	t.Log(err)
	var rc rayv1.RayCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "contested"}, &rc); err != nil {
		t.Fatal(err)
	}
	if *rc.Spec.WorkerGroupSpecs[0].Replicas != 3 {
		t.Errorf("replicas %d, want the other manager's 3", *rc.Spec.WorkerGroupSpecs[0].Replicas)
	}
}

// A server-side dry run returns the object as the apiserver would store it
// (CRD schema checked and defaulted) and stores nothing.
func TestDryRun(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithDryRun(), kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.Up(t.Context(), slicePlan(t, "dry", 2))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Name != "dry" || len(rc.Spec.WorkerGroupSpecs) != 1 || rc.Spec.WorkerGroupSpecs[0].NumOfHosts != 4 {
		t.Errorf("dry-run RayCluster %+v", rc.Spec)
	}
	if _, err := b.Deploy(t.Context(), compileApp(t, chatApp(1, nil))); err != nil {
		t.Fatal(err)
	}
	var clusters rayv1.RayClusterList
	var svcs rayv1.RayServiceList
	if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.List(t.Context(), &svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(clusters.Items) != 0 || len(svcs.Items) != 0 {
		t.Errorf("a dry run stored %d RayClusters and %d RayServices", len(clusters.Items), len(svcs.Items))
	}
}
