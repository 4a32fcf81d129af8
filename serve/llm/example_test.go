package llm_test

import (
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// A model served on TPU v6e 4x4 slices (four hosts of four chips), up to
// two replicas: each replica reserves a whole slice when it starts. The
// plan holds the `serve deploy` entry (build_openai_app with the
// LLMServingArgs in args) and one slice group per replica.
func ExampleOpenAIApp_Compile() {
	plan, err := llm.OpenAIApp{
		Name: "chat",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "gemma", ModelSource: "google/gemma-3-1b-it"},
			AcceleratorType:    "v6e",
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
			EngineKwargs:       map[string]any{"tensor_parallel_size": 4},
			DeploymentConfig: llm.DeploymentConfig{
				AutoscalingConfig: &serveconfig.AutoscalingConfig{MinReplicas: new(1), MaxReplicas: 2},
			},
		}},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := plan.Serve.Config
	fmt.Println(cfg.Name, cfg.ImportPath)
	c := cfg.Args["llm_configs"].([]any)[0].(map[string]any)
	fmt.Println(c["accelerator_type"], c["accelerator_config"])
	for _, g := range plan.Slices {
		fmt.Printf("%s: %s\n", g.Part, g)
	}
	// Output:
	// chat ray.serve.llm:build_openai_app
	// TPU-V6E map[kind:tpu topology:4x4]
	// deployment "LLMServer:gemma" replica 0: 1 × v6e 4x4 (v6e-16): 4 bundles {CPU:1, TPU:4, accelerator_type:TPU-V6E:0.001}, PACK
	// deployment "LLMServer:gemma" replica 1: 1 × v6e 4x4 (v6e-16): 4 bundles {CPU:1, TPU:4, accelerator_type:TPU-V6E:0.001}, PACK
}

// Every problem comes back at once, each at its field with what is valid.
func ExampleOpenAIApp_Compile_errors() {
	_, err := llm.OpenAIApp{LLMConfigs: []llm.LLMConfig{{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "gemma"},
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
		EngineKwargs:       map[string]any{"tensor_parallel_size": 6},
	}}}.Compile()
	var list field.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Println(e)
		}
	}
	_, err = llm.OpenAIApp{LLMConfigs: []llm.LLMConfig{{
		ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "gemma"},
		AcceleratorType:    "v6e",
		AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: "4x4"},
		EngineKwargs:       map[string]any{"tensor_parallel_size": 6},
	}}}.Compile()
	fmt.Println(err)
	// Output:
	// app.llm_configs[0].accelerator_type: Required value: accelerator_type must be provided when specifying a TPU topology for TPU slice provisioning (e.g. TPU-V6E)
	// app.llm_configs[0].engine_kwargs[tensor_parallel_size]: Invalid value: 6: num_devices (6) must be a multiple of chips_per_host (4) for TPU topologies
}
