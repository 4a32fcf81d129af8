package serve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

// Ray's AutoscalingConfig defaults, and AutoscalingConfig.default() used
// for num_replicas "auto".
const (
	defaultMinReplicas     = 1
	defaultMaxReplicas     = 1
	autoMaxReplicas        = 100
	maxReplicasPerNodeMax  = 100
	defaultNumReplicas     = 1
	aggregationFunctionsCS = "mean,max,min"
)

func aggregationFunctions() []string { return strings.Split(aggregationFunctionsCS, ",") }

// MaxReplicas returns Ray's effective maximum replica count for the
// deployment: num_replicas, or autoscaling's max_replicas (with "auto",
// AutoscalingConfig.default() overlaid with the user's fields), as Serve
// would start at most. Serve LLM (package serve/llm) sizes its slices with
// it too. A nil deployment has none; a count below 1 counts as 1 (Compile
// refuses it).
func (d *Deployment) MaxReplicas() int {
	if d == nil {
		return 0
	}
	auto := d.NumReplicas.IsAuto()
	n, _ := d.NumReplicas.Count()
	switch {
	case d.AutoscalingConfig != nil && d.AutoscalingConfig.MaxReplicas > 0:
		return d.AutoscalingConfig.MaxReplicas
	case auto:
		return autoMaxReplicas
	case d.AutoscalingConfig != nil:
		return defaultMaxReplicas
	case n > 0:
		return n
	}
	return defaultNumReplicas
}

// validateAutoscaling checks a against Ray's AutoscalingConfig model,
// whose bounds Serve checks at deploy time; auto says num_replicas is
// "auto", whose defaults differ.
func validateAutoscaling(a *serveconfig.AutoscalingConfig, p *field.Path, auto bool) field.ErrorList {
	var errs field.ErrorList
	// The limits first; a count past one is not compared with the others.
	for _, c := range [...]struct {
		name string
		n    *int
	}{{"min_replicas", a.MinReplicas}, {"initial_replicas", a.InitialReplicas}, {"max_replicas", &a.MaxReplicas}} {
		if c.n != nil && *c.n > placement.MaxReplicas {
			errs = append(errs, field.TooMany(p.Child(c.name), *c.n, placement.MaxReplicas, placement.SourceReplicas))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	minR, maxR := defaultMinReplicas, defaultMaxReplicas
	if auto {
		maxR = autoMaxReplicas
	}
	if a.MinReplicas != nil {
		if *a.MinReplicas < 0 {
			errs = append(errs, field.Invalid(p.Child("min_replicas"), *a.MinReplicas, "must be 0 or more"))
		}
		minR = *a.MinReplicas
	}
	if a.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("max_replicas"), a.MaxReplicas, "must be at least 1"))
	} else if a.MaxReplicas > 0 {
		maxR = a.MaxReplicas
	}
	if a.InitialReplicas != nil && *a.InitialReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("initial_replicas"), *a.InitialReplicas, "must be 0 or more"))
	}
	if len(errs) == 0 {
		if maxR < minR {
			path, v := p.Child("max_replicas"), maxR
			if a.MaxReplicas == 0 {
				path, v = p.Child("min_replicas"), minR
			}
			errs = append(errs, field.Invalid(path, v, fmt.Sprintf("max_replicas (%d) must be greater than or equal to min_replicas (%d)", maxR, minR)))
		} else if a.InitialReplicas != nil && (*a.InitialReplicas < minR || *a.InitialReplicas > maxR) {
			errs = append(errs, field.Invalid(p.Child("initial_replicas"), *a.InitialReplicas, fmt.Sprintf("must be between min_replicas (%d) and max_replicas (%d)", minR, maxR)))
		}
	}
	errs = ruleAt(errs, p, "target_ongoing_requests", a.TargetOngoingRequests, positiveRule(a.TargetOngoingRequests))
	errs = ruleAt(errs, p, "look_back_period_s", a.LookBackPeriodS, positiveRule(a.LookBackPeriodS))
	errs = ruleAt(errs, p, "upscaling_factor", a.UpscalingFactor, positiveRule(a.UpscalingFactor))
	errs = ruleAt(errs, p, "downscaling_factor", a.DownscalingFactor, positiveRule(a.DownscalingFactor))
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"upscale_delay_s", a.UpscaleDelayS}, {"downscale_delay_s", a.DownscaleDelayS}, {"downscale_to_zero_delay_s", a.DownscaleToZeroDelayS}} {
		if why := nonNegativeRule(f.v); why != "" {
			errs = ruleAt(errs, p, f.name, *f.v, why)
		}
	}
	if f := a.AggregationFunction; f != "" && !slices.Contains(aggregationFunctions(), strings.ToLower(f)) {
		errs = append(errs, field.NotSupported(p.Child("aggregation_function"), f, aggregationFunctions()))
	}
	return errs
}
