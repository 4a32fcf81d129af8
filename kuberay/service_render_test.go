package kuberay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// chatApp is a Serve application with a CPU router and an LLM deployment
// whose replicas each own a v4 2x2x2 slice (two hosts).
func chatApp(routerReplicas int, userConfig map[string]any) serve.Application {
	return serve.Application{
		Name:        "chat",
		RoutePrefix: "/chat",
		ImportPath:  "chat.app:build",
		RuntimeEnv:  runtimeenv.RuntimeEnv{WorkingDir: "gs://bucket/code/chat.zip"},
		Args:        map[string]any{"model": "gemma-2b"},
		Deployments: []serve.Deployment{
			{Name: "Router", NumReplicas: serveconfig.ReplicaCount(routerReplicas), UserConfig: userConfig, RayActorOptions: &serve.RayActorOptions{NumCPUs: new(0.5)}},
			{Name: "LLM", NumReplicas: serveconfig.ReplicaCount(2), AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"}},
		},
	}
}

func compileApp(t *testing.T, a serve.Application) *placement.Plan {
	t.Helper()
	p, err := a.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeAsKubeRay decodes a serveConfigV2 document the way KubeRay's
// updateServeDeployment does before it sends the config to Ray's Serve REST
// API (k8s.io/apimachinery/pkg/util/yaml into a map, then JSON), and
// returns its applications as JSON values.
func decodeAsKubeRay(t *testing.T, cfg string) []any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(cfg), &m); err != nil {
		t.Fatalf("KubeRay could not decode serveConfigV2 %q: %v", cfg, err)
	}
	sent, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Applications []any }
	if err := json.Unmarshal(sent, &body); err != nil {
		t.Fatal(err)
	}
	return body.Applications
}

// serveConfigMatches fails t unless cfg holds exactly the plan's compiled
// application, with the replica runtime's py_modules entry when a
// deployment owns slices (see shippedConfig): its bytes verbatim, and the
// same JSON value once decoded as KubeRay decodes it.
func serveConfigMatches(t *testing.T, cfg string, p *placement.Plan) {
	t.Helper()
	raw := shippedConfig(t, p)
	if want := "applications:\n- " + string(raw) + "\n"; cfg != want {
		t.Errorf("serveConfigV2\n%s\nwant the compiled config verbatim\n%s", cfg, want)
	}
	var compiled any
	if err := json.Unmarshal(raw, &compiled); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{compiled}, decodeAsKubeRay(t, cfg)); diff != "" {
		t.Errorf("the applications KubeRay sends differ from the compiled config (-compiled +sent):\n%s", diff)
	}
}

// shippedConfig is the plan's compiled Serve config as a RayService ships
// it: with the mounted replica runtime added to py_modules as the Ray
// backend adds its uploaded one (rayruntime.ShipModule), when a deployment
// owns slices.
func shippedConfig(t *testing.T, p *placement.Plan) []byte {
	t.Helper()
	app := p.Serve.Config
	if rayruntime.HasSliceDeployments(&app) {
		rt, err := kuberay.PackReplicaRuntime()
		if err != nil {
			t.Fatal(err)
		}
		rayruntime.ShipModule(&app, rt.URI())
	}
	raw, err := app.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// compiledConfig is the plan's Serve config as compiled.
func compiledConfig(t *testing.T, p *placement.Plan) []byte {
	t.Helper()
	raw, err := p.Serve.Config.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestRenderService(t *testing.T) {
	t.Parallel()
	p := compileApp(t, chatApp(2, map[string]any{"greeting": "hi"}))
	svc, err := kuberay.RenderService(p, kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	y, err := kuberay.MarshalYAML(svc)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "service-chat-v4.golden.yaml", y)
	serveConfigMatches(t, *svc.Spec.ServeConfigV2, p)
	groups := svc.Spec.RayClusterSpec.WorkerGroupSpecs
	if len(groups) != 2 {
		t.Fatalf("%d worker groups, want one per LLM replica slice (2)", len(groups))
	}
	for _, g := range groups {
		if *g.Replicas != 1 || *g.NumOfHosts != 2 || len(g.Template.Spec.Containers[0].Env) != 0 {
			t.Errorf("group %s: replicas %d numOfHosts %d env %v; want one slice of 2 hosts, no MEGASCALE", *g.GroupName, *g.Replicas, *g.NumOfHosts, g.Template.Spec.Containers[0].Env)
		}
	}
}

func TestRenderServiceRefusals(t *testing.T) {
	t.Parallel()
	local := chatApp(1, nil)
	local.RuntimeEnv.WorkingDir = "./chat"
	local.Deployments[0].RayActorOptions.RuntimeEnv = runtimeenv.RuntimeEnv{PyModules: []string{"./mods"}}
	_, err := kuberay.RenderService(compileApp(t, local), kuberay.Options{})
	if !errors.Is(err, kuberay.ErrLocalWorkingDir) {
		t.Errorf("local working_dir: %v, want ErrLocalWorkingDir", err)
	}
	want := []string{"plan.serve.config.runtime_env.working_dir", "plan.serve.config.deployments[Router].ray_actor_options.runtime_env.py_modules[0]"}
	if got := fields(err); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	job := compile(t, trainer("v6e", "4x4", 1))
	if _, err := kuberay.RenderService(job, kuberay.Options{}); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("a JaxTrainer plan: %v, want ErrUnsupported", err)
	}
	if _, err := kuberay.RenderService(compileApp(t, chatApp(1, nil)), kuberay.Options{}, kuberay.RenderInput{Name: "bad-"}); !slices.Equal(fields(err), []string{"metadata.name"}) {
		t.Errorf("bad name: %v", err)
	}
}

// serveConfigV2 holds the application on one line of compact JSON, even
// when its values hold newlines, tabs and YAML's own syntax, so the YAML
// stays decodable (a flow mapping may not span lines below a block
// sequence entry); its value is the compiled one.
func TestServeConfigV2IsOneLine(t *testing.T) {
	t.Parallel()
	p := compileApp(t, chatApp(1, map[string]any{"prompt": "line one\nline two\t- item: {a: b}", "nested": map[string]any{"k": []any{"x\ny", 1.5}}}))
	var v any
	if err := json.Unmarshal(compiledConfig(t, p), &v); err != nil {
		t.Fatal(err)
	}
	cfg, err := kuberay.ServeConfigV2(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(cfg, "\n"); n != 2 {
		t.Errorf("serveConfigV2 has %d lines, want the applications key and one entry:\n%s", n, cfg)
	}
	if diff := cmp.Diff([]any{v}, decodeAsKubeRay(t, cfg)); diff != "" {
		t.Errorf("(-compiled +decoded):\n%s", diff)
	}
}

// A packed local working_dir: serveConfigV2 is the compiled config with
// only runtime_env's value replaced (working_dir the mounted zip's URI,
// excludes dropped, the replica runtime in py_modules), and every Ray
// container mounts both ConfigMaps.
func TestRenderServicePackedWorkingDir(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, codeTree)
	app := chatApp(1, nil)
	app.RuntimeEnv = runtimeenv.RuntimeEnv{WorkingDir: dir, Excludes: []string{"*.bin"}, EnvVars: map[string]string{"JAX_PLATFORMS": "cpu"}}
	p := compileApp(t, app)
	wd, err := kuberay.PackWorkingDir(dir, []string{"*.bin"})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := renderServiceWith(p, wd)
	if err != nil {
		t.Fatal(err)
	}
	oldEnv := `"runtime_env":{"env_vars":{"JAX_PLATFORMS":"cpu"},"excludes":["*.bin"],"working_dir":"` + dir + `"}`
	rt, err := kuberay.PackReplicaRuntime()
	if err != nil {
		t.Fatal(err)
	}
	newEnv := `"runtime_env":{"env_vars":{"JAX_PLATFORMS":"cpu"},"py_modules":["` + rt.URI() + `"],"working_dir":"` + wd.URI() + `"}`
	compiled := string(compiledConfig(t, p))
	if !strings.Contains(compiled, oldEnv) {
		t.Fatalf("compiled config %s lacks %s", compiled, oldEnv)
	}
	want := "applications:\n- " + strings.Replace(compiled, oldEnv, newEnv, 1) + "\n"
	if got := *svc.Spec.ServeConfigV2; got != want {
		t.Errorf("serveConfigV2\n%s\nwant\n%s", got, want)
	}
	c := svc.Spec.RayClusterSpec
	for i, tmpl := range append([]*corev1ac.PodTemplateSpecApplyConfiguration{c.HeadGroupSpec.Template}, templates(c.WorkerGroupSpecs)...) {
		if got, want := mountedConfigMaps(tmpl), map[string]string{
			kuberay.WorkingDirMountPath:     kuberay.WorkingDirConfigMapName("chat"),
			kuberay.ReplicaRuntimeMountPath: kuberay.ReplicaRuntimeConfigMapName("chat"),
		}; !maps.Equal(got, want) {
			t.Errorf("pod template %d mounts %v, want %v", i, got, want)
		}
	}
	if _, err := kuberay.RenderService(p, kuberay.Options{}); !errors.Is(err, kuberay.ErrLocalWorkingDir) {
		t.Errorf("unpacked: %v, want ErrLocalWorkingDir", err)
	}
}

func templates(gs []rayv1ac.WorkerGroupSpecApplyConfiguration) []*corev1ac.PodTemplateSpecApplyConfiguration {
	var out []*corev1ac.PodTemplateSpecApplyConfiguration
	for _, g := range gs {
		out = append(out, g.Template)
	}
	return out
}

// mountedConfigMaps maps each mount path of a pod template's Ray container
// to the ConfigMap mounted there.
func mountedConfigMaps(tmpl *corev1ac.PodTemplateSpecApplyConfiguration) map[string]string {
	vols := map[string]string{}
	for _, v := range tmpl.Spec.Volumes {
		if v.ConfigMap != nil {
			vols[*v.Name] = *v.ConfigMap.Name
		}
	}
	out := map[string]string{}
	for _, m := range tmpl.Spec.Containers[0].VolumeMounts {
		if cm, ok := vols[*m.Name]; ok && m.ReadOnly != nil && *m.ReadOnly {
			out[*m.MountPath] = cm
		}
	}
	return out
}

// A deployment that owns TPU slices gets the replica runtime as the Ray
// backend ships it: the application's py_modules list the file:// URI of
// the zip every Ray container mounts from the RayService's ConfigMap, and
// nothing else of the compiled config changes. An application without
// slices gets neither.
func TestRenderServiceShipsReplicaRuntime(t *testing.T) {
	t.Parallel()
	p := compileApp(t, chatApp(1, nil))
	svc, err := kuberay.RenderService(p, kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := kuberay.PackReplicaRuntime()
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + kuberay.ReplicaRuntimeMountPath + "/" + rt.Key(); rt.URI() != want {
		t.Errorf("URI %s, want %s", rt.URI(), want)
	}
	sent := decodeAsKubeRay(t, *svc.Spec.ServeConfigV2)
	var compiled any
	if err := json.Unmarshal(compiledConfig(t, p), &compiled); err != nil {
		t.Fatal(err)
	}
	compiled.(map[string]any)["runtime_env"].(map[string]any)["py_modules"] = []any{rt.URI()}
	if diff := cmp.Diff([]any{compiled}, sent); diff != "" {
		t.Errorf("sent config, want the compiled one with the runtime in py_modules (-want +got):\n%s", diff)
	}
	c := svc.Spec.RayClusterSpec
	for i, tmpl := range append([]*corev1ac.PodTemplateSpecApplyConfiguration{c.HeadGroupSpec.Template}, templates(c.WorkerGroupSpecs)...) {
		if got, want := mountedConfigMaps(tmpl), map[string]string{kuberay.ReplicaRuntimeMountPath: kuberay.ReplicaRuntimeConfigMapName("chat")}; !maps.Equal(got, want) {
			t.Errorf("pod template %d mounts %v, want %v", i, got, want)
		}
	}
	cm := kuberay.ReplicaRuntimeConfigMap("chat", "ml", rt, nil, nil)
	if *cm.Name != "chat-replica-runtime" || !bytes.Equal(cm.BinaryData[rt.Key()], rt.Zip) {
		t.Errorf("ConfigMap %s holds keys %v, want chat-replica-runtime holding %s", *cm.Name, slices.Collect(maps.Keys(cm.BinaryData)), rt.Key())
	}
	again, err := kuberay.PackReplicaRuntime()
	if err != nil || again.SHA256 != rt.SHA256 {
		t.Errorf("packed again: %v, sha %s, want %s", err, again.SHA256, rt.SHA256)
	}

	cpu := chatApp(1, nil)
	cpu.Deployments = cpu.Deployments[:1]
	svc, err = kuberay.RenderService(compileApp(t, cpu), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := *svc.Spec.ServeConfigV2; strings.Contains(cfg, "py_modules") {
		t.Errorf("an application without slices got py_modules: %s", cfg)
	}
	if n := len(svc.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Volumes); n != 0 {
		t.Errorf("an application without slices mounts %d volumes on the head", n)
	}
}

// renderServiceWith renders p's RayService with its working_dir packed
// beforehand, as Backend.Deploy does.
func renderServiceWith(p *placement.Plan, wd *kuberay.WorkingDir) (*rayv1ac.RayServiceApplyConfiguration, error) {
	obj, err := kuberay.RenderWith(p, kuberay.Options{}, "", wd)
	if err != nil {
		return nil, err
	}
	return obj.(*rayv1ac.RayServiceApplyConfiguration), nil
}
