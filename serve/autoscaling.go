package serve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Ray's AutoscalingConfig defaults, and AutoscalingConfig.default() used
// for num_replicas "auto".
const (
	defaultMinReplicas     = 1
	defaultMaxReplicas     = 1
	autoMaxReplicas        = 100
	maxReplicasPerNodeMax  = 100
	defaultNumReplicas     = 1
	defaultMaxQueued       = -1
	aggregationFunctionsCS = "mean,max,min"
)

func aggregationFunctions() []string { return strings.Split(aggregationFunctionsCS, ",") }

// MaxReplicas returns Ray's effective maximum replica count for the
// deployment: num_replicas, or autoscaling's max_replicas (with "auto",
// AutoscalingConfig.default() overlaid with the user's fields), as Serve
// would start at most. Serve LLM (package serve/llm) sizes its slices with
// it too.
func (d *Deployment) MaxReplicas() int {
	auto := d.NumReplicas == Auto
	switch {
	case d.AutoscalingConfig != nil && d.AutoscalingConfig.MaxReplicas > 0:
		return d.AutoscalingConfig.MaxReplicas
	case auto:
		return autoMaxReplicas
	case d.AutoscalingConfig != nil:
		return defaultMaxReplicas
	case d.NumReplicas > 0:
		return int(d.NumReplicas)
	}
	return defaultNumReplicas
}

// validateAutoscaling checks a against Ray's AutoscalingConfig model,
// whose bounds Serve checks at deploy time; auto says num_replicas is
// "auto", whose defaults differ.
func validateAutoscaling(a *AutoscalingConfig, p *field.Path, auto bool) field.ErrorList {
	var errs field.ErrorList
	// The limits first; a count past one is not compared with the others.
	for _, c := range [...]struct {
		name string
		n    *int
	}{{"minReplicas", a.MinReplicas}, {"initialReplicas", a.InitialReplicas}, {"maxReplicas", &a.MaxReplicas}} {
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
			errs = append(errs, field.Invalid(p.Child("minReplicas"), *a.MinReplicas, "must be 0 or more"))
		}
		minR = *a.MinReplicas
	}
	if a.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), a.MaxReplicas, "must be at least 1"))
	} else if a.MaxReplicas > 0 {
		maxR = a.MaxReplicas
	}
	if a.InitialReplicas != nil && *a.InitialReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("initialReplicas"), *a.InitialReplicas, "must be 0 or more"))
	}
	if len(errs) == 0 {
		if maxR < minR {
			path, v := p.Child("maxReplicas"), maxR
			if a.MaxReplicas == 0 {
				path, v = p.Child("minReplicas"), minR
			}
			errs = append(errs, field.Invalid(path, v, fmt.Sprintf("max_replicas (%d) must be greater than or equal to min_replicas (%d)", maxR, minR)))
		} else if a.InitialReplicas != nil && (*a.InitialReplicas < minR || *a.InitialReplicas > maxR) {
			errs = append(errs, field.Invalid(p.Child("initialReplicas"), *a.InitialReplicas, fmt.Sprintf("must be between min_replicas (%d) and max_replicas (%d)", minR, maxR)))
		}
	}
	errs = ruleAt(errs, p, "targetOngoingRequests", a.TargetOngoingRequests, positiveRule(a.TargetOngoingRequests))
	errs = ruleAt(errs, p, "lookBackPeriodS", a.LookBackPeriodS, positiveRule(a.LookBackPeriodS))
	errs = ruleAt(errs, p, "upscalingFactor", a.UpscalingFactor, positiveRule(a.UpscalingFactor))
	errs = ruleAt(errs, p, "downscalingFactor", a.DownscalingFactor, positiveRule(a.DownscalingFactor))
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"upscaleDelayS", a.UpscaleDelayS}, {"downscaleDelayS", a.DownscaleDelayS}, {"downscaleToZeroDelayS", a.DownscaleToZeroDelayS}} {
		if why := nonNegativeRule(f.v); why != "" {
			errs = ruleAt(errs, p, f.name, *f.v, why)
		}
	}
	if f := a.AggregationFunction; f != "" && !slices.Contains(aggregationFunctions(), strings.ToLower(f)) {
		errs = append(errs, field.NotSupported(p.Child("aggregationFunction"), f, aggregationFunctions()))
	}
	return errs
}
