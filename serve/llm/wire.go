package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/raytpu/raytpu/serve/internal/freeform"
)

// rayServingArgs is build_openai_app's LLMServingArgs.
type rayServingArgs struct {
	LLMConfigs              []LLMConfig       `json:"llm_configs"`
	IngressClsConfig        *IngressClsConfig `json:"ingress_cls_config,omitempty"`
	IngressDeploymentConfig *DeploymentConfig `json:"ingress_deployment_config,omitempty"`
}

// rayArgs returns the application's args, LLMServingArgs as JSON values
// (maps, lists, json.Number) sharing nothing with a.
func (a *OpenAIApp) rayArgs(cs []compiled) (map[string]any, error) {
	args := rayServingArgs{
		LLMConfigs:              make([]LLMConfig, len(a.LLMConfigs)),
		IngressClsConfig:        a.IngressClsConfig,
		IngressDeploymentConfig: a.IngressDeploymentConfig,
	}
	for i := range a.LLMConfigs {
		args.LLMConfigs[i] = a.LLMConfigs[i].resolved(&cs[i])
	}
	// Copy encodes and decodes the typed values: the plan's args are
	// plain JSON values of their own.
	v, err := freeform.Copy(args)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// resolved is c with what its compile resolved, as Ray's LLMConfig is
// sent it: Ray's accelerator type, the accelerator config's kind (always,
// so that Ray infers nothing raytpu did not), the LoRA path without a
// trailing slash. It shares maps with c; rayArgs snapshots it.
func (c *LLMConfig) resolved(cc *compiled) LLMConfig {
	out := *c
	out.AcceleratorType = cc.accelType
	out.AcceleratorConfig = &AcceleratorConfig{Kind: cc.kind, Topology: c.topology()}
	if l := c.LoraConfig; l != nil {
		lc := *l
		lc.DynamicLoraLoadingPath = strings.TrimRight(l.DynamicLoraLoadingPath, "/")
		out.LoraConfig = &lc
	}
	return out
}

// modelLoadingJSON is ModelLoadingConfig as JSON, model_source a string
// or a CloudMirrorConfig.
type modelLoadingJSON struct {
	ModelID         string `json:"model_id"`
	ModelSource     any    `json:"model_source,omitempty"`
	TokenizerSource string `json:"tokenizer_source,omitempty"`
}

// cloudMirror is Serve LLM's CloudMirrorConfig.
type cloudMirror struct {
	BucketURI  string      `json:"bucket_uri"`
	ExtraFiles []ExtraFile `json:"extra_files"`
}

// MarshalJSON writes Ray's model_loading_config: model_source is a
// CloudMirrorConfig {bucket_uri, extra_files} when ExtraFiles are set,
// else the string.
func (m ModelLoadingConfig) MarshalJSON() ([]byte, error) {
	out := modelLoadingJSON{ModelID: m.ModelID, TokenizerSource: m.TokenizerSource}
	switch {
	case len(m.ExtraFiles) > 0:
		out.ModelSource = cloudMirror{BucketURI: m.ModelSource, ExtraFiles: m.ExtraFiles}
	case m.ModelSource != "":
		out.ModelSource = m.ModelSource
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads Ray's model_loading_config, model_source a string
// or a CloudMirrorConfig.
func (m *ModelLoadingConfig) UnmarshalJSON(b []byte) error {
	if m == nil {
		return errors.New("serve/llm: ModelLoadingConfig.UnmarshalJSON into a nil pointer: pass a pointer to a value")
	}
	var in struct {
		modelLoadingJSON
		ModelSource json.RawMessage `json:"model_source"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*m = ModelLoadingConfig{ModelID: in.ModelID, TokenizerSource: in.TokenizerSource}
	src := bytes.TrimSpace(in.ModelSource)
	switch {
	case len(src) == 0 || string(src) == "null":
		return nil
	case src[0] == '{':
		var mirror cloudMirror
		if err := json.Unmarshal(src, &mirror); err != nil {
			return err
		}
		m.ModelSource, m.ExtraFiles = mirror.BucketURI, mirror.ExtraFiles
		return nil
	}
	return json.Unmarshal(src, &m.ModelSource)
}
