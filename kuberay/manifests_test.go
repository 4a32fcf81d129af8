package kuberay_test

import (
	"bytes"
	"strings"
	"testing"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/kuberay"
)

// What kubectl apply needs to run a plan: a Serve application whose
// deployment owns TPU slices renders the replica runtime's ConfigMap
// before its RayService, as one YAML stream and as a v1 List, and both
// read back as the same objects; a plan that mounts nothing is one object,
// printed exactly as MarshalYAML prints it.
func TestRenderManifests(t *testing.T) {
	t.Parallel()
	objs, err := kuberay.RenderManifests(compileApp(t, chatApp(1, nil)), kuberay.Options{Namespace: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects, want the replica runtime's ConfigMap and the RayService", len(objs))
	}
	cm, ok := objs[0].(*corev1ac.ConfigMapApplyConfiguration)
	svc, ok2 := objs[1].(*rayv1ac.RayServiceApplyConfiguration)
	if !ok || !ok2 {
		t.Fatalf("objects %T, %T; want a ConfigMap, then a RayService", objs[0], objs[1])
	}
	rt, err := kuberay.PackReplicaRuntime()
	if err != nil {
		t.Fatal(err)
	}
	if *cm.Name != kuberay.ReplicaRuntimeConfigMapName(*svc.Name) || *cm.Namespace != "ml" || !bytes.Equal(cm.BinaryData[rt.Key()], rt.Zip) || len(cm.OwnerReferences) != 0 {
		t.Errorf("ConfigMap %s/%s keys %d owners %v; want %s/ml holding %s and no owner", *cm.Namespace, *cm.Name, len(cm.BinaryData), cm.OwnerReferences, kuberay.ReplicaRuntimeConfigMapName(*svc.Name), rt.Key())
	}
	if !strings.Contains(*svc.Spec.ServeConfigV2, rt.URI()) {
		t.Errorf("serveConfigV2 does not name %s", rt.URI())
	}
	y, err := kuberay.MarshalManifestsYAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	j, err := kuberay.MarshalManifestsJSON(objs)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"YAML": y, "JSON": j} {
		back, err := kuberay.DecodeManifests(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := kuberay.MarshalManifestsYAML(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, y) {
			t.Errorf("%s read back and printed again differs from the rendered YAML", name)
		}
	}

	one, err := kuberay.RenderManifests(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := kuberay.RenderPlan(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := kuberay.MarshalManifestsYAML(one)
	want, _ := kuberay.MarshalYAML(obj)
	if len(one) != 1 || !bytes.Equal(got, want) {
		t.Errorf("a plan that mounts nothing: %d objects, printed:\n%s\nwant MarshalYAML's:\n%s", len(one), got, want)
	}
}

// A stream that is not one KubeRay object with its ConfigMaps is refused,
// saying what is valid.
func TestDecodeManifestsRefusals(t *testing.T) {
	t.Parallel()
	obj, err := kuberay.RenderPlan(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	job, err := kuberay.MarshalYAML(obj)
	if err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: files\n"
	for name, c := range map[string]struct{ in, want string }{
		"two objects":   {string(job) + "---\n" + string(job), "hold 2 RayJob, RayService or RayCluster objects, want exactly one"},
		"no object":     {cm, "hold 0 RayJob"},
		"another kind":  {"apiVersion: v1\nkind: Secret\n---\n" + string(job), `manifest 0 (valid kinds: v1 ConfigMap, RayCluster, RayJob, RayService)`},
		"unknown field": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: files\nbinaryDatum: {}\n---\n" + string(job), "a ConfigMap"},
		"empty":         {"\n---\n", "empty"},
	} {
		if _, err := kuberay.DecodeManifests([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
