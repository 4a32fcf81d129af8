package llm_test

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// appCase is an OpenAIApp and the outcome of its Compile: the errors
// (path and type, in order) or, for a valid app, its slice group count
// and optionally the golden file of its plan.
type appCase struct {
	name   string
	app    llm.OpenAIApp
	want   []field.Ref
	slices int
	golden string
}

func ref(f string, t field.Type) field.Ref { return field.Ref{Field: f, Type: t} }

const (
	required     = field.TypeRequired
	invalid      = field.TypeInvalid
	notSupported = field.TypeNotSupported
	forbidden    = field.TypeForbidden
	tooMany      = field.TypeTooMany
)

// model is a config of model "m" on a v4 2x2x2 slice (two hosts) with the
// changes of f applied.
func model(f func(*llm.LLMConfig)) llm.LLMConfig {
	c := llm.LLMConfig{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "m", ModelSource: "/models/m"},
		AcceleratorType:    "v4",
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "2x2x2"},
	}
	f(&c)
	return c
}

func app(cs ...llm.LLMConfig) llm.OpenAIApp { return llm.OpenAIApp{Name: "llm", LLMConfigs: cs} }

func same(*llm.LLMConfig) {}

const p0 = "app.llm_configs[0]."

var appCases = []appCase{
	{name: "v4 slice", app: app(model(same)), golden: "v4-slice", slices: 1},
	{name: "typical", golden: "typical", slices: 3, app: llm.OpenAIApp{
		Name: "chat", RoutePrefix: "/", RuntimeEnv: runtimeenv.RuntimeEnv{EnvVars: map[string]string{"HF_HUB_OFFLINE": "1"}},
		LLMConfigs: []llm.LLMConfig{
			{
				ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "qwen-0.5b", ModelSource: "Qwen/Qwen2.5-0.5B-Instruct"},
				AcceleratorType:    "TPU-V6E",
				AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
				EngineKwargs:       map[string]any{"tensor_parallel_size": 4, "max_model_len": 2048},
				DeploymentConfig: llm.DeploymentConfig{AutoscalingConfig: &serveconfig.AutoscalingConfig{
					MinReplicas: new(1), MaxReplicas: 2, TargetOngoingRequests: 16}},
				LoraConfig: &llm.LoraConfig{DynamicLoraLoadingPath: "gs://b/loras/", MaxNumAdaptersPerReplica: 4},
			},
			{
				ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "tiny", ModelSource: "gs://b/tiny",
					ExtraFiles: []llm.ExtraFile{{BucketURI: "gs://b/extra.json", DestinationPath: "/tmp/extra.json"}}},
				AcceleratorType:   "v5litepod",
				AcceleratorConfig: &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "2x4"},
				DeploymentConfig:  llm.DeploymentConfig{Name: "tiny-server", NumReplicas: serveconfig.ReplicaCount(1)},
			},
		},
		IngressDeploymentConfig: &llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(2)},
	}},
	{name: "cpu engine", golden: "cpu", app: app(llm.LLMConfig{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "org/tiny.v1", ModelSource: "/models/tiny"},
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.CPU},
		EngineKwargs:       map[string]any{"dtype": "float32", "max_model_len": 256},
		DeploymentConfig:   llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(1), RayActorOptions: &serve.RayActorOptions{NumCPUs: new(1.0)}},
	})},
	{name: "tpu without topology", golden: "tpu-no-topology", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorConfig = nil
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 2}
	}))},
	{name: "bundle per worker", golden: "bundle-per-worker", slices: 3, app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"TPU": 4, "CPU": 2}, Strategy: placement.Spread}
		c.DeploymentConfig.NumReplicas = serveconfig.ReplicaCount(3)
	}))},
	{name: "tp 1 reserves the whole slice", slices: 1, app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 1}
	}))},
	{name: "tp 8 over two hosts", slices: 1, app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 4, "pipeline_parallel_size": 2.0}
	}))},
	{name: "autoscaling max 4", slices: 4, app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: 4}
	}))},
	{name: "auto replicas", slices: 100, app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorConfig.Topology = "2x2x1"
		c.DeploymentConfig.NumReplicas = serveconfig.AutoReplicas()
	}))},
	{name: "tpu inferred from bundles", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorConfig = nil
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{Bundles: []map[string]float64{{"TPU": 1}, {"TPU": 1}}}
	}))},

	// Serve LLM's own rules.
	{name: "topology without accelerator type", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorType = "" })),
		want: []field.Ref{ref(p0+"accelerator_type", required)}},
	{name: "heterogeneous TPU bundles", app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{Bundles: []map[string]float64{{"TPU": 4}, {"TPU": 2}}}
	})), want: []field.Ref{ref(p0+"placement_group_config.bundles[1]", invalid)}},
	{name: "chips do not divide into hosts", app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 6}
	})), want: []field.Ref{ref(p0+"engine_kwargs[tensor_parallel_size]", invalid)}},
	{name: "more chips than the slice", app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 16}
	})), want: []field.Ref{ref(p0+"engine_kwargs[tensor_parallel_size]", invalid)}},
	{name: "3 chips per bundle", app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"tensor_parallel_size": 3}
	})), want: []field.Ref{ref(p0+"engine_kwargs[tensor_parallel_size]", invalid)}},
	{name: "both bundle forms", app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"TPU": 4}, Bundles: []map[string]float64{{"TPU": 4}}}
	})), want: []field.Ref{ref(p0+"placement_group_config.bundles", forbidden)}},
	{name: "no bundle form", app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{Strategy: placement.Pack}
	})), want: []field.Ref{ref(p0+"placement_group_config.bundle_per_worker", required)}},
	{name: "bad strategy", app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"TPU": 4}, Strategy: "PAKC"}
	})), want: []field.Ref{ref(p0+"placement_group_config.strategy", notSupported)}},
	{name: "negative bundle resource", app: app(model(func(c *llm.LLMConfig) {
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"TPU": 4, "CPU": -1}}
	})), want: []field.Ref{ref(p0+"placement_group_config.bundle_per_worker[CPU]", invalid)}},
	{name: "accelerator type with cpu kind", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorConfig = &llm.AcceleratorConfig{Kind: llm.CPU}
	})), want: []field.Ref{ref(p0+"accelerator_type", forbidden)}},
	{name: "cpu bundles with accelerator type", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorConfig = nil
		c.PlacementGroupConfig = &llm.PlacementGroupConfig{BundlePerWorker: map[string]float64{"CPU": 1}}
	})), want: []field.Ref{ref(p0+"accelerator_type", forbidden)}},
	{name: "no accelerator at all", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorType, c.AcceleratorConfig = "", nil })),
		want: []field.Ref{ref(p0+"accelerator_type", required)}},
	{name: "gpu kind", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorConfig.Kind = "gpu" })),
		want: []field.Ref{ref(p0+"accelerator_config.kind", notSupported)}},
	{name: "gpu accelerator type", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorType = "A10G" })),
		want: []field.Ref{ref(p0+"accelerator_type", notSupported)}},
	{name: "topology on cpu", app: app(model(func(c *llm.LLMConfig) {
		c.AcceleratorType = ""
		c.AcceleratorConfig.Kind = llm.CPU
	})), want: []field.Ref{ref(p0+"accelerator_config.topology", forbidden)}},

	// The catalog's rules, at the LLM config's fields.
	{name: "unknown topology", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorConfig.Topology = "2x2x3" })),
		want: []field.Ref{ref(p0+"accelerator_config.topology", notSupported)}},
	{name: "malformed topology", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorConfig.Topology = "4by4" })),
		want: []field.Ref{ref(p0+"accelerator_config.topology", invalid)}},
	{name: "unknown generation", app: app(model(func(c *llm.LLMConfig) { c.AcceleratorType = "v9" })),
		want: []field.Ref{ref(p0+"accelerator_type", notSupported)}},

	// Serve's rules for the deployment options.
	{name: "num replicas with autoscaling", app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig.NumReplicas = serveconfig.ReplicaCount(2)
		c.DeploymentConfig.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: 2}
	})), want: []field.Ref{ref(p0+"deployment_config.num_replicas", forbidden)}},
	{name: "min above max", app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(3), MaxReplicas: 2}
	})), want: []field.Ref{ref(p0+"deployment_config.autoscaling_config.max_replicas", invalid)}},
	{name: "negative health check", app: app(model(func(c *llm.LLMConfig) { c.DeploymentConfig.HealthCheckPeriodS = -1 })),
		want: []field.Ref{ref(p0+"deployment_config.health_check_period_s", invalid)}},
	{name: "too many slice replicas", app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: 1025}
	})), want: []field.Ref{ref(p0+"deployment_config.autoscaling_config.max_replicas", tooMany)}},
	{name: "negative router backoff", app: app(model(func(c *llm.LLMConfig) {
		c.DeploymentConfig.RequestRouterConfig = &llm.RequestRouterConfig{InitialBackoffS: -1}
	})), want: []field.Ref{ref(p0+"deployment_config.request_router_config.initial_backoff_s", invalid)}},

	// The model, the engine and the rest.
	{name: "no model id", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelID = "" })),
		want: []field.Ref{ref(p0+"model_loading_config.model_id", required)}},
	{name: "http model source", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelSource = "https://h/m" })),
		want: []field.Ref{ref(p0+"model_loading_config.model_source", notSupported)}},
	{name: "extra files without a bucket", app: app(model(func(c *llm.LLMConfig) {
		c.ModelLoadingConfig.ExtraFiles = []llm.ExtraFile{{BucketURI: "gs://b/f"}}
	})), want: []field.Ref{ref(p0+"model_loading_config.extra_files", forbidden), ref(p0+"model_loading_config.extra_files[0].destination_path", required)}},
	{name: "other engine", app: app(model(func(c *llm.LLMConfig) { c.LLMEngine = "SGLang" })),
		want: []field.Ref{ref(p0+"llm_engine", notSupported)}},
	{name: "model in engine kwargs", app: app(model(func(c *llm.LLMConfig) { c.EngineKwargs = map[string]any{"model": "x"} })),
		want: []field.Ref{ref(p0+"engine_kwargs[model]", forbidden)}},
	{name: "fractional tp", app: app(model(func(c *llm.LLMConfig) { c.EngineKwargs = map[string]any{"tensor_parallel_size": 1.5} })),
		want: []field.Ref{ref(p0+"engine_kwargs[tensor_parallel_size]", invalid)}},
	{name: "mp executor on TPU", app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"distributed_executor_backend": "mp"}
	})), want: []field.Ref{ref(p0+"engine_kwargs[distributed_executor_backend]", invalid)}},
	{name: "no log stats with metrics", app: app(model(func(c *llm.LLMConfig) {
		c.EngineKwargs = map[string]any{"disable_log_stats": true}
	})), want: []field.Ref{ref(p0+"engine_kwargs[disable_log_stats]", invalid)}},
	{name: "local lora path", app: app(model(func(c *llm.LLMConfig) { c.LoraConfig = &llm.LoraConfig{DynamicLoraLoadingPath: "/loras"} })),
		want: []field.Ref{ref(p0+"lora_config.dynamic_lora_loading_path", invalid)}},
	{name: "local working dir", app: app(model(func(c *llm.LLMConfig) { c.RuntimeEnv.WorkingDir = "./code" })),
		want: []field.Ref{ref(p0+"runtime_env.working_dir", invalid)}},
	{name: "renamed experimental key", app: app(model(func(c *llm.LLMConfig) {
		c.ExperimentalConfigs = map[string]any{"num_router_replicas": 2}
	})), want: []field.Ref{ref(p0+"experimental_configs[num_router_replicas]", forbidden)}},

	// The application.
	{name: "no models", app: llm.OpenAIApp{Name: "x"}, want: []field.Ref{ref("app.llm_configs", required)}},
	{name: "duplicate model ids", app: app(model(same), model(same)),
		want: []field.Ref{ref("app.llm_configs[1].model_loading_config.model_id", invalid)}},
	{name: "colliding deployment names", app: app(model(same), model(func(c *llm.LLMConfig) {
		c.ModelLoadingConfig.ModelID = "m2"
		c.DeploymentConfig.Name = "m"
	})),
		want: []field.Ref{ref("app.llm_configs[1].deployment_config.name", invalid)}},
	{name: "bad route prefix", app: llm.OpenAIApp{RoutePrefix: "v1", LLMConfigs: []llm.LLMConfig{model(same)}},
		want: []field.Ref{ref("app.route_prefix", invalid)}},
	{name: "bad ingress options", app: llm.OpenAIApp{LLMConfigs: []llm.LLMConfig{model(same)},
		IngressDeploymentConfig: &llm.DeploymentConfig{MaxQueuedRequests: serveconfig.MaxQueued(-3)}},
		want: []field.Ref{ref("app.ingress_deployment_config.max_queued_requests", invalid)}},
	{name: "every error at once", app: app(model(func(c *llm.LLMConfig) {
		c.ModelLoadingConfig.ModelID = ""
		c.AcceleratorType = ""
		c.LLMEngine = "x"
	})), want: []field.Ref{
		ref(p0+"model_loading_config.model_id", required),
		ref(p0+"llm_engine", notSupported),
		ref(p0+"accelerator_type", required),
	}},
}
