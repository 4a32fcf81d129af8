package llm_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// TestHostileLLMInput: a value that holds itself is refused at the path
// of the cycle (it overflowed the stack before), a model id is checked
// where the user wrote it, control characters and "/../" are refused,
// and paths use the Serve LLM file's spelling.
func TestHostileLLMInput(t *testing.T) {
	t.Parallel()
	self := map[string]any{}
	self["self"] = self
	long := strings.Repeat("m", 300)
	cases := []appCase{
		{name: "engine_kwargs hold themselves", app: app(model(func(c *llm.LLMConfig) { c.EngineKwargs = self })),
			want: []field.Ref{ref(p0+"engine_kwargs[self]", invalid)}},
		{name: "engine_kwargs nested cycle", app: app(model(func(c *llm.LLMConfig) {
			c.EngineKwargs = map[string]any{"tensor_parallel_size": 4, "x": []any{self}}
		})), want: []field.Ref{ref(p0+"engine_kwargs[x][0][self]", invalid)}},
		{name: "tensor_parallel_size a map", app: app(model(func(c *llm.LLMConfig) {
			c.EngineKwargs = map[string]any{"tensor_parallel_size": map[string]any{"n": 4}}
		})), want: []field.Ref{ref(p0+"engine_kwargs[tensor_parallel_size]", invalid)}},
		{name: "negative LoRA tries and timeout", app: app(model(func(c *llm.LLMConfig) {
			c.LoraConfig = &llm.LoraConfig{MaxDownloadTries: -1, DownloadTimeoutS: new(-2.0)}
		})), want: []field.Ref{ref(p0+"lora_config.max_download_tries", invalid), ref(p0+"lora_config.download_timeout_s", invalid)}},
		{name: "NaN router backoff", app: app(model(func(c *llm.LLMConfig) {
			c.DeploymentConfig.RequestRouterConfig = &llm.RequestRouterConfig{MaxBackoffS: math.NaN()}
		})), want: []field.Ref{ref(p0+"deployment_config.request_router_config.max_backoff_s", invalid)}},
		{name: "experimental_configs hold themselves", app: app(model(func(c *llm.LLMConfig) { c.ExperimentalConfigs = self })),
			want: []field.Ref{ref(p0+"experimental_configs[self]", invalid)}},
		{name: "user_config holds itself", app: app(model(func(c *llm.LLMConfig) { c.DeploymentConfig.UserConfig = self })),
			want: []field.Ref{ref(p0+"deployment_config.user_config[self]", invalid)}},
		{name: "ingress kwargs hold themselves", app: llm.OpenAIApp{LLMConfigs: []llm.LLMConfig{model(same)},
			IngressClsConfig: &llm.IngressClsConfig{IngressExtraKwargs: self}},
			want: []field.Ref{ref("app.ingress_cls_config.ingress_extra_kwargs[self]", invalid)}},
		{name: "300-character model id", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelID = long })),
			want: []field.Ref{ref(p0+"model_loading_config.model_id", tooMany)}},
		{name: "300-character deployment name", app: app(model(func(c *llm.LLMConfig) { c.DeploymentConfig.Name = long })),
			want: []field.Ref{ref(p0+"deployment_config.name", tooMany)}},
		{name: "model id with NUL, ESC and a newline", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelID = "m\x00\x1b\n" })),
			want: []field.Ref{ref(p0+"model_loading_config.model_id", invalid)}},
		{name: "model id climbing", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelID = "org/../../etc" })),
			want: []field.Ref{ref(p0+"model_loading_config.model_id", invalid)}},
		{name: "model source climbing", app: app(model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelSource = "/models/../../etc" })),
			want: []field.Ref{ref(p0+"model_loading_config.model_source", invalid)}},
		{name: "app name with BEL", app: llm.OpenAIApp{Name: "chat\x07", LLMConfigs: []llm.LLMConfig{model(same)}},
			want: []field.Ref{ref("app.name", invalid)}},
		{name: "route prefix climbing", app: llm.OpenAIApp{RoutePrefix: "/v1/../x", LLMConfigs: []llm.LLMConfig{model(same)}},
			want: []field.Ref{ref("app.route_prefix", invalid)}},
		{name: "deployment name with ESC", app: app(model(func(c *llm.LLMConfig) { c.DeploymentConfig.Name = "d\x1b[2J" })),
			want: []field.Ref{ref(p0+"deployment_config.name", invalid)}},
		{name: "num_replicas -1 is not auto", app: app(model(func(c *llm.LLMConfig) {
			c.DeploymentConfig.NumReplicas = serveconfig.ReplicaCount(-1)
		})), want: []field.Ref{ref(p0+"deployment_config.num_replicas", invalid)}},
		{name: "duplicate ids name the second model id", app: app(model(same), model(func(c *llm.LLMConfig) { c.ModelLoadingConfig.ModelID = "m" })),
			want: []field.Ref{ref("app.llm_configs[1].model_loading_config.model_id", invalid)}},
		{name: "derived names collide, a.b against a_b", app: app(
			model(func(c *llm.LLMConfig) {
				c.ModelLoadingConfig.ModelID = "a.b"
				c.AcceleratorConfig = &llm.AcceleratorConfig{Kind: llm.CPU}
				c.AcceleratorType = ""
			}),
			model(func(c *llm.LLMConfig) {
				c.ModelLoadingConfig.ModelID = "a_b"
				c.AcceleratorConfig = &llm.AcceleratorConfig{Kind: llm.CPU}
				c.AcceleratorType = ""
			})),
			want: []field.Ref{ref("app.llm_configs[1].model_loading_config.model_id", invalid)}},
	}
	for _, c := range cases {
		_, err := c.app.Compile()
		if diff := cmp.Diff(c.want, field.Refs(err), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s\n%v", c.name, diff, err)
		}
		if err != nil {
			msg := err.Error()
			for _, bad := range []string{"map[string]interface", "llmConfigs", "deploymentConfig"} {
				if strings.Contains(msg, bad) {
					t.Errorf("%s: the message holds %q: %v", c.name, bad, err)
				}
			}
		}
	}
}

// TestLLMEntryPointsAreTotal: nil backends, typed nils and nil contexts
// are errors, never panics.
func TestLLMEntryPointsAreTotal(t *testing.T) {
	t.Parallel()
	a := app(model(same))
	var nilCtx context.Context
	calls := map[string]func() error{
		"Run nil backend":     func() error { _, err := a.Run(t.Context(), nil, nil); return err },
		"Deploy nil backend":  func() error { _, err := a.Deploy(t.Context(), nil); return err },
		"Deploy nil ctx":      func() error { _, err := a.Deploy(nilCtx, nil); return err },
		"Compile zero":        func() error { _, err := llm.OpenAIApp{}.Compile(); return err },
		"Compile zero config": func() error { _, err := app(llm.LLMConfig{}).Compile(); return err },
		"Unmarshal nil": func() error {
			return (*llm.ModelLoadingConfig)(nil).UnmarshalJSON([]byte(`{}`))
		},
	}
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
}
