package kubetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The real kube-controller-manager runs beside the control plane: its Job
// controller gives a Job a pod, which the pod runner runs to completion,
// and the Job completes; its garbage collector deletes an object whose
// owner was deleted.
func TestControllerManager(t *testing.T) {
	began := time.Now()
	env, err := kubetest.Start(context.Background(), kubetest.WithControllerManager(), kubetest.WithPodRunner(podrunner.Options{MaxGrace: 2 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane, controller manager, operator and pod runner started in %v", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	t.Run("JobGetsAPod", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ns := env.Namespace(t)
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "submitter", Namespace: ns},
			Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", "echo submitted"}}},
			}}},
		}
		began := time.Now()
		if err := env.Client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		var pods corev1.PodList
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
				return false, err
			}
			return job.Status.Succeeded == 1, nil
		})
		if err != nil {
			t.Fatalf("waiting for the Job to complete: %v; status %+v", err, job.Status)
		}
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "submitter"}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 1 {
			t.Fatalf("%d pods of the Job, want 1", len(pods.Items))
		}
		p := pods.Items[0]
		if p.Status.Phase != corev1.PodSucceeded || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != job.UID {
			t.Errorf("pod %s: phase %s, owners %+v; want Succeeded, owned by the Job", p.Name, p.Status.Phase, p.OwnerReferences)
		}
		t.Logf("Job created, its pod ran and the Job completed in %v", time.Since(began).Round(time.Millisecond))
	})
	t.Run("GarbageCollection", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ns := env.Namespace(t)
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
		if err := env.Client.Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
		if err := env.Client.Create(ctx, owned); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if err := env.Client.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(owned), owned)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Fatalf("waiting for the owned ConfigMap to be collected: %v", err)
		}
		t.Logf("owned object collected %v after its owner's deletion", time.Since(began).Round(time.Millisecond))
	})
}
