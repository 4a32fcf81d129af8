package llm

import (
	"strings"

	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// rayLLMConfig is an LLMConfig as Ray's LLMConfig model takes it, with
// the values raytpu resolves: Ray's accelerator type, the accelerator
// config's kind, the model source as a CloudMirrorConfig when it has
// extra files.
type rayLLMConfig struct {
	ModelLoadingConfig   rayModelLoading        `json:"model_loading_config"`
	LLMEngine            string                 `json:"llm_engine,omitempty"`
	EngineKwargs         map[string]any         `json:"engine_kwargs,omitempty"`
	AcceleratorType      string                 `json:"accelerator_type,omitempty"`
	AcceleratorConfig    *AcceleratorConfig     `json:"accelerator_config,omitempty"`
	PlacementGroupConfig *PlacementGroupConfig  `json:"placement_group_config,omitempty"`
	LoraConfig           *LoraConfig            `json:"lora_config,omitempty"`
	DeploymentConfig     *DeploymentConfig      `json:"deployment_config,omitempty"`
	RuntimeEnv           *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	ExperimentalConfigs  map[string]any         `json:"experimental_configs,omitempty"`
	LogEngineMetrics     *bool                  `json:"log_engine_metrics,omitempty"`
}

type rayModelLoading struct {
	ModelID         string `json:"model_id"`
	ModelSource     any    `json:"model_source,omitempty"`
	TokenizerSource string `json:"tokenizer_source,omitempty"`
}

type rayMirror struct {
	BucketURI  string      `json:"bucket_uri"`
	ExtraFiles []ExtraFile `json:"extra_files"`
}

// rayServingArgs is build_openai_app's LLMServingArgs.
type rayServingArgs struct {
	LLMConfigs              []rayLLMConfig    `json:"llm_configs"`
	IngressClsConfig        *IngressClsConfig `json:"ingress_cls_config,omitempty"`
	IngressDeploymentConfig *DeploymentConfig `json:"ingress_deployment_config,omitempty"`
}

// rayArgs returns the application's args, LLMServingArgs as JSON values
// (maps, lists, json.Number) sharing nothing with a.
func (a *OpenAIApp) rayArgs(cs []compiled) (map[string]any, error) {
	args := rayServingArgs{
		LLMConfigs:              make([]rayLLMConfig, len(a.LLMConfigs)),
		IngressClsConfig:        a.IngressClsConfig,
		IngressDeploymentConfig: a.IngressDeploymentConfig,
	}
	for i := range a.LLMConfigs {
		args.LLMConfigs[i] = a.LLMConfigs[i].ray(&cs[i])
	}
	// Snapshot encodes and decodes the typed values: the plan's args are
	// plain JSON values of their own.
	v, err := serveconfig.Snapshot(args)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// ray is c as Ray's LLMConfig takes it, given its compile.
func (c *LLMConfig) ray(cc *compiled) rayLLMConfig {
	m := &c.ModelLoadingConfig
	out := rayLLMConfig{
		ModelLoadingConfig: rayModelLoading{ModelID: m.ModelID, TokenizerSource: m.TokenizerSource},
		LLMEngine:          c.LLMEngine,
		EngineKwargs:       c.EngineKwargs,
		AcceleratorType:    cc.accelType,
		// The kind is always sent, so Ray infers nothing raytpu did not.
		AcceleratorConfig:    &AcceleratorConfig{Kind: cc.kind, Topology: c.topology()},
		PlacementGroupConfig: c.PlacementGroupConfig,
		ExperimentalConfigs:  c.ExperimentalConfigs,
		LogEngineMetrics:     c.LogEngineMetrics,
	}
	switch {
	case len(m.ExtraFiles) > 0:
		out.ModelLoadingConfig.ModelSource = rayMirror{BucketURI: m.ModelSource, ExtraFiles: m.ExtraFiles}
	case m.ModelSource != "":
		out.ModelLoadingConfig.ModelSource = m.ModelSource
	}
	if l := c.LoraConfig; l != nil {
		lc := *l
		lc.DynamicLoraLoadingPath = strings.TrimRight(l.DynamicLoraLoadingPath, "/")
		out.LoraConfig = &lc
	}
	if d := c.DeploymentConfig; !d.isZero() {
		out.DeploymentConfig = &d
	}
	if !c.RuntimeEnv.IsEmpty() {
		out.RuntimeEnv = &c.RuntimeEnv
	}
	return out
}

// isZero reports whether d sets no option.
func (d DeploymentConfig) isZero() bool {
	return d.Name == "" && d.NumReplicas == 0 && d.AutoscalingConfig == nil && d.MaxOngoingRequests == 0 &&
		d.MaxQueuedRequests == 0 && d.UserConfig == nil && d.HealthCheckPeriodS == 0 && d.HealthCheckTimeoutS == 0 &&
		d.GracefulShutdownWaitLoopS == nil && d.GracefulShutdownTimeoutS == nil && d.RayActorOptions == nil &&
		d.RequestRouterConfig == nil
}
