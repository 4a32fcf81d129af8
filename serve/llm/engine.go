package llm

import (
	"encoding/json"
	"math"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve/internal/freeform"
)

// Engine kwargs Serve LLM reads or sets itself.
const (
	kwTensorParallel   = "tensor_parallel_size"
	kwPipelineParallel = "pipeline_parallel_size"
	kwExecutorBackend  = "distributed_executor_backend"
	kwDisableLogStats  = "disable_log_stats"
)

// validateEngineKwargs checks the engine kwargs Serve LLM itself reads:
// model and served_model_name are its own, the parallel sizes are
// positive counts, a TPU engine runs on Ray's executor, and engine
// metrics need log stats.
func (c *LLMConfig) validateEngineKwargs(p *field.Path) field.ErrorList {
	kw := c.EngineKwargs
	if kw == nil {
		return nil
	}
	kp := p.Child("engine_kwargs")
	errs := checkJSON(kp, kw)
	for _, k := range [...]string{"model", "served_model_name"} {
		if _, ok := kw[k]; ok {
			errs = append(errs, field.Forbidden(kp.Key(k), "model or served_model_name is not allowed in engine_kwargs when using Ray Serve LLM: use model_loading_config"))
		}
	}
	for _, k := range [...]string{kwTensorParallel, kwPipelineParallel} {
		if v, ok := kw[k]; ok {
			if n, ok := count(v); !ok || n < 1 {
				errs = append(errs, field.Invalid(kp.Key(k), freeform.Describe(v), "must be a positive integer"))
			}
		}
	}
	if v, ok := kw[kwExecutorBackend]; ok && v != "ray" && c.inferKind() == TPU {
		errs = append(errs, field.Invalid(kp.Key(kwExecutorBackend), freeform.Describe(v),
			`distributed_executor_backend != "ray" is not allowed in engine_kwargs when using Ray Serve LLM Configs`))
	}
	if v, _ := kw[kwDisableLogStats].(bool); v && (c.LogEngineMetrics == nil || *c.LogEngineMetrics) {
		errs = append(errs, field.Invalid(kp.Key(kwDisableLogStats), v,
			"disable_log_stats cannot be set to true when log_engine_metrics is enabled (its default): engine metrics need log stats"))
	}
	return errs
}

// devices is the number of chips the engine uses, tensor_parallel_size ×
// pipeline_parallel_size (each 1 when unset), and the path a problem with
// it is reported at.
func (c *LLMConfig) devices(p *field.Path) (int, *field.Path) {
	n := 1
	at := p.Child("engine_kwargs").Key(kwTensorParallel)
	for _, k := range [...]string{kwTensorParallel, kwPipelineParallel} {
		if v, ok := count(c.EngineKwargs[k]); ok && v > 0 {
			n *= v
			if k == kwPipelineParallel && c.EngineKwargs[kwTensorParallel] == nil {
				at = p.Child("engine_kwargs").Key(k)
			}
		}
	}
	return n, at
}

// count reads a whole number a JSON value holds (int, float64,
// json.Number).
func count(v any) (int, bool) {
	var f float64
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		f = float64(v)
	case float64:
		f = v
	case json.Number:
		x, err := v.Float64()
		if err != nil {
			return 0, false
		}
		f = x
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<30 {
		return 0, false
	}
	return int(f), true
}
