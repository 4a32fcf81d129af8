package kuberay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// Faults on a control plane of its own (the test stops and starts its
// parts, so it shares it with no other test and runs before the parallel
// tests start theirs):
//
//  1. The operator stops while it reconciles the RayJob (the RayCluster
//     exists, its pods are being created); the plan is applied again while
//     it is down; a new operator with empty caches takes over.
//  2. kube-apiserver stops (etcd keeps the objects); an apply while it is
//     down fails loudly; it restarts on the same address; the plan is
//     applied again, and the operator, whose watches broke, serves a new
//     RayCluster.
//
// After each: exactly one RayJob and one RayCluster with their first UIDs,
// exactly 1 head and 8 worker pods, the RayJob still naming its cluster.
func TestFaults(t *testing.T) {
	env, err := kubetest.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	plan := compile(t, trainer("v6e", "4x4", 2))
	const name = "faulty"
	job, err := b.Apply(t.Context(), plan, name)
	if err != nil {
		t.Fatal(err)
	}

	// 1. Operator restart in the middle of the reconcile.
	var cluster rayv1.RayCluster
	waitFor(t, time.Minute, "the RayJob's RayCluster", func() (bool, string) {
		var clusters rayv1.RayClusterList
		if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(clusters.Items) == 0 {
			return false, "no RayCluster"
		}
		cluster = clusters.Items[0]
		return true, ""
	})
	if err := env.StopOperator(); err != nil {
		t.Fatal(err)
	}
	t.Logf("operator stopped with %d of 9 pods created", countPods(t, env, ns, cluster.Name))
	if _, err := b.Apply(t.Context(), plan, name); err != nil {
		t.Fatalf("re-apply while the operator is down: %v", err)
	}
	if err := env.StartOperator(context.Background()); err != nil {
		t.Fatal(err)
	}
	settled(t, env, ns, job.UID, cluster.UID)

	// 2. API server restart.
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, downErr := b.Apply(ctx, plan, name)
	cancel()
	if downErr == nil {
		t.Error("an apply with kube-apiserver down succeeded")
	}
	t.Logf("apply while kube-apiserver is down: %v", downErr)
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "re-apply after the restart", func() (bool, string) {
		_, err := b.Apply(t.Context(), plan, name)
		return err == nil, fmt.Sprint(err)
	})
	settled(t, env, ns, job.UID, cluster.UID)
	// The operator noticed the restart: a new RayCluster gets its pods.
	if _, err := b.Up(t.Context(), slicePlan(t, "after-restart", 1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if st, err := b.WaitCluster(ctx, "after-restart", nil); err != nil || !st.Ready {
		t.Fatalf("a RayCluster after the apiserver restart: %+v, %v", st, err)
	}
}

// settled waits until the RayJob and its RayCluster are whole again and
// checks that nothing was duplicated or lost.
func settled(t *testing.T, env *kubetest.Env, ns string, jobUID, clusterUID types.UID) {
	t.Helper()
	waitFor(t, 2*time.Minute, "1 RayJob, 1 RayCluster, 9 running pods", func() (bool, string) {
		var jobs rayv1.RayJobList
		var clusters rayv1.RayClusterList
		var pods corev1.PodList
		if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if len(jobs.Items) != 1 || jobs.Items[0].UID != jobUID {
			t.Fatalf("%d RayJobs; want only the first (uid %s)", len(jobs.Items), jobUID)
		}
		if len(clusters.Items) > 1 || len(clusters.Items) == 1 && clusters.Items[0].UID != clusterUID {
			t.Fatalf("%d RayClusters; want only the first (uid %s)", len(clusters.Items), clusterUID)
		}
		if len(pods.Items) > 9 {
			t.Fatalf("%d pods: duplicated", len(pods.Items))
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		job := jobs.Items[0]
		state := fmt.Sprintf("RayJob %s cluster %q, %d RayClusters, %d pods (%d running)", job.Status.JobDeploymentStatus, job.Status.RayClusterName, len(clusters.Items), len(pods.Items), running)
		return len(clusters.Items) == 1 && running == 9 && job.Status.RayClusterName == clusters.Items[0].Name, state
	})
}
