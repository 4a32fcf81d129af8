package raybackend

import (
	"encoding/json"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// llmConfig is what the diagnosis reads of one of a Serve LLM
// application's llm_configs (Ray 2.60's LLMConfig, as Ray echoes it): the
// model's deployment name and the slice its replicas reserve.
type llmConfig struct {
	ModelLoadingConfig struct {
		ModelID string `json:"model_id"`
	} `json:"model_loading_config"`
	AcceleratorType   string `json:"accelerator_type"`
	AcceleratorConfig *struct {
		Kind     string `json:"kind"`
		Topology string `json:"topology"`
	} `json:"accelerator_config"`
	DeploymentConfig struct {
		Name string `json:"name"`
	} `json:"deployment_config"`
}

// llmReservations reads, from the args of a build_openai_app application,
// the slice each replica of every model with a TPU topology reserves when
// it starts (Serve LLM's deferred slice placement group: a
// TPU-<pod type>-head reservation, then the whole slice), by the model's
// deployment name (LLMServer:<name>). A model whose accelerator type and
// topology make no slice of the catalog is left out: its replicas fail on
// their own, and Serve reports why.
func llmReservations(args map[string]any) map[string]sliceReservation {
	out := map[string]sliceReservation{}
	raw, err := json.Marshal(args["llm_configs"])
	if err != nil {
		return out
	}
	var configs []llmConfig
	if json.Unmarshal(raw, &configs) != nil {
		return out
	}
	for _, c := range configs {
		a := c.AcceleratorConfig
		if a == nil || a.Kind != "tpu" || a.Topology == "" || c.AcceleratorType == "" {
			continue
		}
		shape, errs := placement.SliceSpec{Topology: a.Topology, Accelerator: c.AcceleratorType}.Resolve(placement.Fields{})
		if len(errs) > 0 {
			continue
		}
		sl := shape.Slice
		out[rayvocab.ServeLLMServerName(c.ModelLoadingConfig.ModelID, c.DeploymentConfig.Name)] = sliceReservation{
			reservation: reservation{
				Topology:           a.Topology,
				AcceleratorVersion: sl.Generation.RayVersion,
				AcceleratorType:    sl.Generation.RayAcceleratorType(),
				PodType:            sl.PodType(),
				NumHosts:           sl.Hosts(),
				ChipsPerHost:       sl.ChipsPerHost,
			},
			llm: true,
		}
	}
	return out
}
