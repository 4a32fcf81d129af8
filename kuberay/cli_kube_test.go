package kuberay_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// cliTestdata holds the golden output of raytpu render (the command's own
// tests of raytpu apply against this control plane are in its package).
const cliTestdata = "../cmd/raytpu/internal/cli/testdata"

// What `raytpu render` prints (its golden files) is accepted by the
// apiserver's CRD schema validation and by KubeRay's own validation.
func TestRenderedByTheCommandApply(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cliTestdata, "render-*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("golden files of raytpu render: %v (%v)", files, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.ApplyManifest(t.Context(), ns, raw)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if err := kubeRayValidates(out); err != nil {
			t.Errorf("%s: KubeRay's validation: %v", filepath.Base(f), err)
		}
		// The ConfigMaps printed before the object (a packed local
		// working_dir, the replica runtime) are written, holding the zip
		// the object's runtime_env names.
		objs, err := kuberay.DecodeManifests(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range objs.ConfigMaps {
			var cm corev1.ConfigMap
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: *want.Name}, &cm); err != nil {
				t.Errorf("%s: ConfigMap %s: %v", filepath.Base(f), *want.Name, err)
				continue
			}
			for key, zip := range want.BinaryData {
				if !bytes.Equal(cm.BinaryData[key], zip) || !strings.Contains(string(raw), key) {
					t.Errorf("%s: ConfigMap %s: key %s holds %d bytes, want the %d rendered, named by the object", filepath.Base(f), *want.Name, key, len(cm.BinaryData[key]), len(zip))
				}
			}
		}
		// A RayService whose replicas own TPU slices mounts the replica
		// runtime's ConfigMap; applying it writes that too.
		if svc, ok := out.(*rayv1.RayService); ok && strings.Contains(string(raw), kuberay.ReplicaRuntimeMountPath) {
			var cm corev1.ConfigMap
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kuberay.ReplicaRuntimeConfigMapName(svc.Name)}, &cm); err != nil {
				t.Errorf("%s: the replica runtime's ConfigMap: %v", filepath.Base(f), err)
			} else if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != svc.UID {
				t.Errorf("%s: the replica runtime's ConfigMap is owned by %+v, want RayService %s", filepath.Base(f), cm.OwnerReferences, svc.UID)
			}
		}
	}
}
