package kuberay_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/rayruntime"
)

// WorkingDirMaxSize is the apiserver's own ConfigMap limit: binaryData of
// exactly that many bytes is accepted, one byte more is refused.
func TestWorkingDirLimitIsTheAPIServers(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	for _, c := range []struct {
		size int
		ok   bool
	}{{kuberay.WorkingDirMaxSize, true}, {kuberay.WorkingDirMaxSize + 1, false}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("size-%d", c.size), Namespace: ns},
			BinaryData: map[string][]byte{"wd.zip": bytes.Repeat([]byte{1}, c.size)}}
		err := env.Client.Create(t.Context(), cm)
		if c.ok && err != nil || !c.ok && !apierrors.IsInvalid(err) {
			t.Errorf("a ConfigMap of %d bytes: %v, want accepted=%v", c.size, err, c.ok)
		}
	}
}

// A job whose working_dir is a local directory: Apply packs it, with the
// launcher's files, into a ConfigMap owned by the RayJob, the RayJob runs in the file:// URI of the
// mounted zip, and the pods the real operator creates mount it in the head
// and in every TPU worker. Applying again changes nothing; changed files
// are another run.
func TestApplyLocalWorkingDir(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeTree(t, codeTree)
	tr := trainer("v6e", "4x4", 1)
	tr.RuntimeEnv.WorkingDir = dir
	tr.RuntimeEnv.Excludes = []string{"*.bin"}
	plan := compile(t, tr)
	job, err := b.Apply(t.Context(), plan, "local-code")
	if err != nil {
		t.Fatal(err)
	}
	packed, err := kuberay.PackJobWorkingDir(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !packed.Runtime || job.Spec.Entrypoint != rayruntime.Entrypoint {
		t.Errorf("entrypoint %.80q with the launcher's files packed %v: want %q run in the working_dir that holds them", job.Spec.Entrypoint, packed.Runtime, rayruntime.Entrypoint)
	}
	if want := "working_dir: " + packed.URI(); !strings.Contains(job.Spec.RuntimeEnvYAML, want) {
		t.Errorf("runtimeEnvYAML %q lacks %q", job.Spec.RuntimeEnvYAML, want)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kuberay.WorkingDirConfigMapName("local-code")}, &cm); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cm.BinaryData[packed.Key()], packed.Zip) || len(cm.BinaryData) != 1 {
		t.Errorf("ConfigMap keys %v: want exactly %s holding the packed zip", keys(cm.BinaryData), packed.Key())
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != job.UID || cm.OwnerReferences[0].Kind != "RayJob" {
		t.Errorf("ConfigMap owners %+v, want the RayJob %s", cm.OwnerReferences, job.UID)
	}

	var pods corev1.PodList
	waitFor(t, time.Minute, "1 head and 4 worker pods", func() (bool, string) {
		if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(pods.Items) == 5, fmt.Sprintf("%d pods", len(pods.Items))
	})
	for _, p := range pods.Items {
		if !mountsWorkingDir(p, cm.Name) {
			t.Errorf("pod %s (%s) does not mount ConfigMap %s at %s", p.Name, p.Labels["ray.io/node-type"], cm.Name, kuberay.WorkingDirMountPath)
		}
	}

	// KubeRay has updated the RayJob meanwhile (its finalizer); the second
	// Apply sends nothing, so nothing conflicts and nothing moves.
	var before rayv1.RayJob
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "local-code"}, &before); err != nil {
		t.Fatal(err)
	}
	again, err := b.Apply(t.Context(), plan, "local-code")
	if err != nil {
		t.Fatal(err)
	}
	var cm2 corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(&cm), &cm2); err != nil {
		t.Fatal(err)
	}
	var after rayv1.RayJob
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "local-code"}, &after); err != nil {
		t.Fatal(err)
	}
	if again.UID != job.UID || after.Generation != before.Generation || cm2.ResourceVersion != cm.ResourceVersion {
		t.Errorf("a second Apply changed the RayJob (gen %d -> %d) or the ConfigMap (rv %s -> %s)", before.Generation, after.Generation, cm.ResourceVersion, cm2.ResourceVersion)
	}
	writeFile(t, dir, "train_loop.py", "changed\n")
	if _, err := b.Apply(t.Context(), plan, "local-code"); !errors.Is(err, kuberay.ErrAlreadyExists) {
		t.Errorf("Apply after the code changed: %v, want ErrAlreadyExists", err)
	}
	var jobs rayv1.RayJobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil || len(jobs.Items) != 1 {
		t.Errorf("%d RayJobs (%v), want 1", len(jobs.Items), err)
	}
}

func mountsWorkingDir(p corev1.Pod, configMap string) bool {
	var vol string
	for _, v := range p.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == configMap {
			vol = v.Name
		}
	}
	for _, m := range p.Spec.Containers[0].VolumeMounts {
		if vol != "" && m.Name == vol && m.MountPath == kuberay.WorkingDirMountPath && m.ReadOnly {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Deploy of a Serve application with a local working_dir: the ConfigMap is
// owned by the RayService, and the head of the RayCluster the real operator
// creates mounts it.
func TestDeployLocalWorkingDir(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	app := chatApp(1, nil)
	app.RuntimeEnv.WorkingDir = writeTree(t, codeTree)
	if _, err := b.Deploy(t.Context(), compileApp(t, app)); err != nil {
		t.Fatal(err)
	}
	svc := getService(t, env, ns, "chat")
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kuberay.WorkingDirConfigMapName("chat")}, &cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != svc.UID {
		t.Errorf("ConfigMap owners %+v, want the RayService %s", cm.OwnerReferences, svc.UID)
	}
	var key string
	for k := range cm.BinaryData {
		key = k
	}
	if !strings.Contains(svc.Spec.ServeConfigV2, `"working_dir":"file://`+kuberay.WorkingDirMountPath+"/"+key+`"`) {
		t.Errorf("serveConfigV2 %s does not run in the ConfigMap's zip %s", svc.Spec.ServeConfigV2, key)
	}
	waitFor(t, time.Minute, "the head pod mounting the working_dir", func() (bool, string) {
		var pods corev1.PodList
		if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/node-type": "head"}); err != nil {
			t.Fatal(err)
		}
		return len(pods.Items) == 1 && mountsWorkingDir(pods.Items[0], cm.Name), fmt.Sprintf("%d head pods", len(pods.Items))
	})
}
