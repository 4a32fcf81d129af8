package kuberay_test

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/rayruntime"
)

// What kubectl apply needs to run a plan: a Serve application whose
// deployment owns TPU slices renders the replica runtime's ConfigMap
// before its RayService, as one YAML stream and as a v1 List, and both
// read back as the same objects; a plan that mounts nothing is one object,
// printed exactly as MarshalYAML prints it.
func TestRenderManifests(t *testing.T) {
	t.Parallel()
	objs, err := kuberay.Render(compileApp(t, chatApp(1, nil)), kuberay.Options{Namespace: "ml"}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.ConfigMaps) != 1 || objs.Service == nil || objs.Job != nil || objs.Cluster != nil {
		t.Fatalf("%d ConfigMaps, service %v; want the replica runtime's ConfigMap and the RayService", len(objs.ConfigMaps), objs.Service != nil)
	}
	cm, svc := objs.ConfigMaps[0], objs.Service
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
	y, err := objs.YAML()
	if err != nil {
		t.Fatal(err)
	}
	j, err := objs.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"YAML": y, "JSON": j} {
		back, err := kuberay.DecodeManifests(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := back.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, y) {
			t.Errorf("%s read back and printed again differs from the rendered YAML", name)
		}
	}

	one, err := kuberay.Render(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := kuberay.RenderPlan(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := one.YAML()
	want, _ := kuberay.MarshalYAML(obj)
	if len(one.ConfigMaps) != 0 || one.Job == nil || !bytes.Equal(got, want) {
		t.Errorf("a plan that mounts nothing: %d ConfigMaps, printed:\n%s\nwant MarshalYAML's:\n%s", len(one.ConfigMaps), got, want)
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

// A plan that runs raytpu's launcher without a working_dir gets one
// holding the launcher's files alone, as the Ray backend gives it, so the
// train workers on every TPU pod import the launcher's runtime: rendered
// as its ConfigMap before the RayJob, which runs the launcher in it. With
// a remote working_dir nothing is packed.
func TestRenderManifestsShipTheLauncherWithoutWorkingDir(t *testing.T) {
	t.Parallel()
	tr := trainer("v4", "2x2x2", 2)
	tr.RuntimeEnv.WorkingDir = ""
	p := compile(t, tr)
	if !kuberay.ShipsWorkingDir(p) {
		t.Fatal("a launcher plan without a working_dir ships none")
	}
	objs, err := kuberay.Render(p, kuberay.Options{}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.ConfigMaps) != 1 || objs.Job == nil {
		t.Fatalf("%d ConfigMaps, job %v; want the working_dir's ConfigMap and the RayJob", len(objs.ConfigMaps), objs.Job != nil)
	}
	cm, job := objs.ConfigMaps[0], objs.Job
	wd, err := kuberay.PackJobWorkingDir(p)
	if err != nil {
		t.Fatal(err)
	}
	if !wd.Runtime || len(zipNames(t, wd.Zip)) == 0 || !bytes.Equal(cm.BinaryData[wd.Key()], wd.Zip) || *cm.Name != kuberay.WorkingDirConfigMapName(*job.Name) {
		t.Errorf("ConfigMap %s keys %d, runtime %v; want %s holding the launcher's files under %s", *cm.Name, len(cm.BinaryData), wd.Runtime, kuberay.WorkingDirConfigMapName(*job.Name), wd.Key())
	}
	files, err := rayruntime.Files(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"working_dir/"}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		want = append(want, "working_dir/"+n)
	}
	if got := zipNames(t, wd.Zip); !slices.Equal(got, want) {
		t.Errorf("zip entries %q, want the launcher's files alone %q", got, want)
	}
	if !strings.Contains(*job.Spec.RuntimeEnvYAML, wd.URI()) || strings.Contains(*job.Spec.Entrypoint, "b64decode") {
		t.Errorf("RayJob runtime_env %q, entrypoint %.80q; want the working_dir %s and the launcher run in it", *job.Spec.RuntimeEnvYAML, *job.Spec.Entrypoint, wd.URI())
	}

	remote := compile(t, trainer("v4", "2x2x2", 2))
	if kuberay.ShipsWorkingDir(remote) {
		t.Error("a plan with a remote working_dir ships one")
	}
	if objs, err := kuberay.Render(remote, kuberay.Options{}, kuberay.RenderInput{}); err != nil || len(objs.ConfigMaps) != 0 {
		t.Errorf("a remote working_dir: %v (%v), want the RayJob alone", objs, err)
	}
}

// A RayJob decoder given another kind says so instead of returning an
// empty RayJob.
func TestDecodeJobYAMLRefusesOtherKinds(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "kind: RayJob\n", ""} {
		if job, err := kuberay.DecodeJobYAML([]byte(in)); err == nil {
			t.Errorf("%q: %v, want an error naming the kind", in, job)
		}
	}
}
