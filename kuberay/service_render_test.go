package kuberay_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
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
			{Name: "Router", NumReplicas: serve.NumReplicas(routerReplicas), UserConfig: userConfig, RayActorOptions: &serve.RayActorOptions{NumCPUs: serve.Ptr(0.5)}},
			{Name: "LLM", NumReplicas: 2, AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"}},
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
// application: its bytes verbatim, and the same JSON value once decoded as
// KubeRay decodes it.
func serveConfigMatches(t *testing.T, cfg string, p *placement.Plan) {
	t.Helper()
	if want := "applications:\n- " + string(p.Serve.Config) + "\n"; cfg != want {
		t.Errorf("serveConfigV2\n%s\nwant the compiled config verbatim\n%s", cfg, want)
	}
	var compiled any
	if err := json.Unmarshal(p.Serve.Config, &compiled); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{compiled}, decodeAsKubeRay(t, cfg)); diff != "" {
		t.Errorf("the applications KubeRay sends differ from the compiled config (-compiled +sent):\n%s", diff)
	}
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
	if _, err := kuberay.RenderService(compileApp(t, chatApp(1, nil)), kuberay.Options{Name: "bad-"}); !slices.Equal(fields(err), []string{"metadata.name"}) {
		t.Errorf("bad name: %v", err)
	}
}

// A Serve config that is indented JSON is compacted, so the YAML stays
// decodable; its value is unchanged.
func TestServeConfigV2Compacts(t *testing.T) {
	t.Parallel()
	p := compileApp(t, chatApp(1, nil))
	var v any
	if err := json.Unmarshal(p.Serve.Config, &v); err != nil {
		t.Fatal(err)
	}
	indented, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	p.Serve.Config = indented
	cfg, err := kuberay.ServeConfigV2(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{v}, decodeAsKubeRay(t, cfg)); diff != "" {
		t.Errorf("(-compiled +decoded):\n%s", diff)
	}
}
