package llm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/tpu"
)

// llmDeliberateDifferences lists the specs raytpu refuses although Ray's
// LLMConfig, build_openai_app and Serve's build step accept the
// equivalent raw config, with the reason. The cross-check asserts that Ray
// does accept each of them, so the list stays true.
var llmDeliberateDifferences = map[string]string{
	"heterogeneous TPU bundles":      "Serve LLM checks a slice's bundles when the replica reserves the slice, not at build",
	"chips do not divide into hosts": "the slice's bundles are checked when the replica reserves the slice, not at build",
	"more chips than the slice":      "the slice's bundles are checked when the replica reserves the slice, not at build",
	"3 chips per bundle":             "the slice's bundles are checked when the replica reserves the slice, not at build",
	"unknown topology":               "Ray checks the topology when the replica reserves the slice, not at build",
	"malformed topology":             "Ray checks the topology when the replica reserves the slice, not at build",
	"no accelerator at all":          "Ray's default is a GPU engine; raytpu compiles TPU and CPU deployments only",
	"topology on cpu":                "Ray's CPU config drops the topology; raytpu refuses what would be dropped",
	"too many slice replicas":        "raytpu's bound on the slice groups a plan holds; Ray has none",
	"no model id":                    "Ray takes an empty model_id, which no OpenAI request can name",
	"http model source":              "Ray takes any string as a Hugging Face ID and fails when the replica downloads it",
	"model in engine kwargs":         "Ray sets the engine's model itself; a second one fails at engine start",
	"fractional tp":                  "vLLM's engine arguments are checked when the engine starts, not at build",
	"mp executor on TPU":             "vLLM's engine arguments are checked when the engine starts, not at build",
	"local working dir":              "an LLMConfig's runtime_env goes to Ray as it is; a local working_dir fails when the replica starts",
	"colliding deployment names":     "Ray's build_app accepts two deployments of one name; raytpu names each model's slice groups by its deployment, so refuses it",
}

// raycheckExtra are more valid specs for the cross-check: options the
// compile tests do not need, each of which Ray must accept as raytpu
// sends it.
var raycheckExtra = []appCase{
	{name: "v6e 4x4 tp 4", app: app(llm.LLMConfig{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "org/qwen.v2", ModelSource: "s3://b/qwen", TokenizerSource: "Qwen/Qwen2.5-0.5B"},
		AcceleratorType:    "v6e",
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
		EngineKwargs:       map[string]any{"tensor_parallel_size": 4, "max_model_len": 4096, "dtype": "bfloat16"},
	})},
	{name: "v5p with router and metrics off", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorType = "TPU-V5P"
		c.AcceleratorConfig.Topology = "2x2x1"
		c.LogEngineMetrics = new(false)
		c.EngineKwargs = map[string]any{"disable_log_stats": true}
		c.DeploymentConfig.RequestRouterConfig = &llm.RequestRouterConfig{
			RequestRouterClass: "ray.serve.llm.request_router:PrefixCacheAffinityRouter",
			InitialBackoffS:    0.1, BackoffMultiplier: 2, MaxBackoffS: 1,
		}
	}))},
	{name: "cpu bundles", app: app(llm.LLMConfig{
		ModelLoadingConfig:   llm.ModelLoadingConfig{ModelID: "tiny"},
		PlacementGroupConfig: &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"CPU": 2}},
		RuntimeEnv:           runtimeenv.RuntimeEnv{EnvVars: map[string]string{"VLLM_CPU_KVCACHE_SPACE": "1"}},
	})},
	{name: "deployment options", app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig = llm.DeploymentConfig{
			Name: "chat-server", NumReplicas: serveconfig.ReplicaCount(2), MaxOngoingRequests: 64, MaxQueuedRequests: serveconfig.MaxQueued(128),
			HealthCheckPeriodS: 5, HealthCheckTimeoutS: 30, GracefulShutdownTimeoutS: new(20.0),
			UserConfig: map[string]any{"k": "v"}, RayActorOptions: &serve.RayActorOptions{NumCPUs: new(0.5)},
		}
		c.ExperimentalConfigs = map[string]any{"stream_batching_interval_ms": 50}
	}))},
	{name: "ingress options", app: llm.OpenAIApp{Name: "llm", RoutePrefix: "/api",
		LLMConfigs:              []llm.LLMConfig{model(same)},
		IngressDeploymentConfig: &llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(3), MaxOngoingRequests: 1000},
	}},
}

// rawApp is the Serve application config a spec would send without
// raytpu's checks (accelerator types in Ray's spelling where the catalog
// knows them), so that Ray's verdict on a refused spec can be compared
// with raytpu's.
func rawApp(t *testing.T, a llm.OpenAIApp) []byte {
	t.Helper()
	cs := slices.Clone(a.LLMConfigs)
	for i := range cs {
		if g, ok := tpu.LookupGeneration(cs[i].AcceleratorType); ok {
			cs[i].AcceleratorType = g.RayAcceleratorType()
		}
	}
	name := a.Name
	if name == "" {
		name = serve.DefaultName
	}
	type args struct {
		LLMConfigs              []llm.LLMConfig       `json:"llm_configs"`
		IngressClsConfig        *llm.IngressClsConfig `json:"ingress_cls_config,omitempty"`
		IngressDeploymentConfig *llm.DeploymentConfig `json:"ingress_deployment_config,omitempty"`
	}
	b, err := json.Marshal(struct {
		Name        string                `json:"name"`
		RoutePrefix string                `json:"route_prefix,omitempty"`
		ImportPath  string                `json:"import_path"`
		RuntimeEnv  runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
		Args        args                  `json:"args"`
	}{name, a.RoutePrefix, llm.ImportPath, a.RuntimeEnv, args{cs, a.IngressClsConfig, a.IngressDeploymentConfig}})
	if err != nil {
		t.Fatalf("raw config: %v", err)
	}
	return b
}

type llmVerdict struct {
	ID          string   `json:"id"`
	Stage       string   `json:"stage"`
	Error       string   `json:"error"`
	Deployments []string `json:"deployments"`
}

// TestConfigsAreRayServeLLMs judges, in one Python process in the LLM
// virtualenv, every compiled config of appCases and raycheckExtra with
// Ray 2.60's own Serve LLM code (Serve's ServeDeploySchema, LLMConfig,
// then build_openai_app and Serve's build_app as the controller's build
// step runs them), and checks that Ray refuses the raw config of every
// spec raytpu refuses, unless llmDeliberateDifferences says why not. For
// an accepted spec, the deployments Ray builds are the ones the plan's
// slice groups are named for, plus the ingress.
func TestConfigsAreRayServeLLMs(t *testing.T) {
	t.Parallel()
	py := venvtest.LLMPython(t)
	cases := slices.Concat(appCases, raycheckExtra)
	type entry struct {
		ID     string          `json:"id"`
		Config json.RawMessage `json:"config"`
	}
	var req struct {
		Configs []entry `json:"configs"`
	}
	servers := make([][]string, len(cases)) // the LLMServer deployments raytpu's plan names
	for i, tc := range cases {
		var cfg []byte
		plan, err := tc.app.Compile()
		if (err == nil) != (tc.want == nil) {
			t.Fatalf("%s: Compile: %v, want errors %v", tc.name, err, tc.want)
		}
		if err == nil {
			if cfg, err = plan.Serve.Config.MarshalJSON(); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for j := range tc.app.LLMConfigs {
				servers[i] = append(servers[i], llm.ServerPrefix+llm.DeploymentName(&tc.app.LLMConfigs[j]))
			}
		} else {
			cfg = rawApp(t, tc.app)
		}
		req.Configs = append(req.Configs, entry{ID: tc.name, Config: cfg})
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv("RAYCHECK_DUMP"); f != "" {
		if err := os.WriteFile(f, in, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A bound below go test's default 10 minutes, so that a hang shows the
	// script's progress (stderr names each case before it is judged).
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "raycheck.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("raycheck.py: %v\n%s", err, stderr.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var head struct {
		RayVersion  string  `json:"ray_version"`
		VLLMVersion string  `json:"vllm_version"`
		ImportS     float64 `json:"import_s"`
	}
	var verdicts []llmVerdict
	for n := 0; sc.Scan(); n++ {
		var err error
		if n == 0 {
			err = json.Unmarshal(sc.Bytes(), &head)
		} else {
			var v llmVerdict
			err = json.Unmarshal(sc.Bytes(), &v)
			verdicts = append(verdicts, v)
		}
		if err != nil {
			t.Fatalf("raycheck.py line %d: %v\n%s", n+1, err, sc.Bytes())
		}
	}
	if head.RayVersion != "2.60.0" || head.VLLMVersion != "0.29.0" {
		t.Errorf("LLM virtualenv has Ray %s and vLLM %s; the rules mirror Ray 2.60.0 with vLLM 0.29.0", head.RayVersion, head.VLLMVersion)
	}
	if len(verdicts) != len(cases) {
		t.Fatalf("%d verdicts for %d specs\n%s", len(verdicts), len(cases), stderr.String())
	}
	verbose := os.Getenv("RAYCHECK_VERBOSE") != ""
	var accepted, refusedByBoth int
	for i, tc := range cases {
		v := verdicts[i]
		if v.ID != tc.name {
			t.Fatalf("verdict %d is for %q, want %q", i, v.ID, tc.name)
		}
		why, deliberate := llmDeliberateDifferences[tc.name]
		switch {
		case tc.want == nil:
			if v.Stage != "ok" {
				t.Errorf("%s: raytpu accepts it, Ray refuses the compiled config at %s: %s", tc.name, v.Stage, v.Error)
				continue
			}
			accepted++
			want := append(slices.Clone(servers[i]), llm.IngressName)
			slices.Sort(want)
			if !slices.Equal(v.Deployments, want) {
				t.Errorf("%s: Ray builds deployments %q, raytpu's plan names %q", tc.name, v.Deployments, want)
			}
		case deliberate:
			if v.Stage != "ok" {
				t.Errorf("%s: listed as a deliberate difference (%s), but Ray refuses it too at %s: %s", tc.name, why, v.Stage, v.Error)
			}
		default:
			if v.Stage == "ok" {
				t.Errorf("%s: raytpu refuses it (%v), Ray accepts the raw config; fix the rule or list it in llmDeliberateDifferences", tc.name, tc.want)
			} else {
				refusedByBoth++
			}
		}
		if verbose || (tc.want != nil && v.Stage != "ok") {
			t.Logf("%-40s Ray: %-10s %.300s", tc.name, v.Stage, strings.Join(strings.Fields(v.Error), " "))
		}
	}
	t.Logf("Ray %s with vLLM %s: %d specs, %d accepted by both, %d refused by both, %d deliberate differences; one Python process: %.1fs wall, %.1fs CPU (imports %.1fs)",
		head.RayVersion, head.VLLMVersion, len(cases), accepted, refusedByBoth, len(llmDeliberateDifferences),
		wall.Seconds(), cpu.Seconds(), head.ImportS)
}
