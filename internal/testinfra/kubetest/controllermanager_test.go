package kubetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The real kube-controller-manager runs beside the control plane: its Job
// controller gives a Job a pod, which the pod runner runs to completion,
// and the Job completes; its garbage collector deletes an object whose
// owner was deleted; its service account controller and root CA publisher,
// with the ServiceAccount admission plugin, give a pod a token and CA with
// which it reaches the API server from inside its network namespace.
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
	t.Run("PodReachesAPIServer", func(t *testing.T) {
		t.Parallel()
		testPodReachesAPIServer(t, env)
	})
}

// apiClientScript is what an in-cluster client does (Ray's KubeRay node
// provider among them): it reads the pod's service account token,
// namespace and CA from the admission plugin's volume and lists the pods
// of its namespace at $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT_HTTPS
// and at kubernetes.default.svc, verifying the API server's certificate;
// then it lists namespace default's, which its account may not.
const apiClientScript = `
import json, os, ssl, urllib.error, urllib.request
d = "/var/run/secrets/kubernetes.io/serviceaccount"
token, ns = open(d + "/token").read(), open(d + "/namespace").read()
tls = ssl.create_default_context(cafile=d + "/ca.crt")
port = os.environ["KUBERNETES_SERVICE_PORT_HTTPS"]
def get(host, ns):
    req = urllib.request.Request(f"https://{host}:{port}/api/v1/namespaces/{ns}/pods", headers={"Authorization": "Bearer " + token})
    try:
        return json.load(urllib.request.urlopen(req, context=tls, timeout=30))
    except urllib.error.HTTPError as e:
        return {"code": e.code}
for host in (os.environ["KUBERNETES_SERVICE_HOST"], "kubernetes.default.svc"):
    print("pods", host, ns, json.dumps(sorted(p["metadata"]["name"] for p in get(host, ns)["items"])), flush=True)
print("default", get("kubernetes.default.svc", "default").get("code"), flush=True)
`

func testPodReachesAPIServer(t *testing.T, env *kubetest.Env) {
	ctx := t.Context()
	ns := env.Namespace(t)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "in-cluster", Namespace: ns}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "c", Image: "python", Command: []string{"python", "-c", apiClientScript}}},
	}}
	began := time.Now()
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The admission plugin gave the pod its account and the projected
	// kube-api-access volume (token, kube-root-ca.crt, namespace).
	if pod.Spec.ServiceAccountName != "default" || len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Projected == nil {
		t.Fatalf("admitted pod: serviceAccountName %q, volumes %+v; want default and one projected volume", pod.Spec.ServiceAccountName, pod.Spec.Volumes)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed, nil
	})
	logs, lerr := env.Pods.Logs(ns, pod.Name, "c")
	if err != nil || lerr != nil || pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod phase %s (%v); its log (%v):\n%s", pod.Status.Phase, err, lerr, logs)
	}
	gw := env.Pods.Gateway()
	want := fmt.Sprintf("pods %s %s [\"in-cluster\"]\npods kubernetes.default.svc %s [\"in-cluster\"]\ndefault 403\n", gw, ns, ns)
	if logs != want {
		t.Errorf("the pod's log:\n%s\nwant:\n%s", logs, want)
	}
	t.Logf("pod created, listed its namespace's pods through the API server and exited in %v", time.Since(began).Round(time.Millisecond))
}
