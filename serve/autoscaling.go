package serve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// AutoscalingConfig mirrors ray.serve.config.AutoscalingConfig. Unset
// fields are not sent; Serve fills in the defaults named below, or, with
// NumReplicas Auto, the "auto" defaults (min 1, max 100, target 2).
type AutoscalingConfig struct {
	// MinReplicas is the fewest replicas; 0 allows scaling to zero.
	// Optional. Default: 1.
	MinReplicas *int `json:"min_replicas,omitempty"`
	// InitialReplicas is the replica count at the first deploy, between
	// MinReplicas and MaxReplicas. Optional. Default: MinReplicas.
	InitialReplicas *int `json:"initial_replicas,omitempty"`
	// MaxReplicas is the most replicas. Optional. Default: 1 (100 with
	// NumReplicas Auto).
	MaxReplicas int `json:"max_replicas,omitempty"`
	// TargetOngoingRequests is the load per replica Serve scales toward.
	// Optional. Default: 2.
	TargetOngoingRequests float64 `json:"target_ongoing_requests,omitempty"`
	// UpscaleDelayS is how long, in seconds, load must stay high before
	// Serve adds replicas. Optional. Default: 30.
	UpscaleDelayS *float64 `json:"upscale_delay_s,omitempty"`
	// DownscaleDelayS is how long, in seconds, load must stay low before
	// Serve removes replicas. Optional. Default: 600.
	DownscaleDelayS *float64 `json:"downscale_delay_s,omitempty"`
	// DownscaleToZeroDelayS is the delay, in seconds, of the last step from
	// 1 replica to 0. Optional. Default: DownscaleDelayS.
	DownscaleToZeroDelayS *float64 `json:"downscale_to_zero_delay_s,omitempty"`
	// LookBackPeriodS is the window, in seconds, metrics are averaged over.
	// Optional. Default: 30.
	LookBackPeriodS float64 `json:"look_back_period_s,omitempty"`
	// UpscalingFactor and DownscalingFactor damp each scaling step.
	// Optional. Default: 1.
	UpscalingFactor   float64 `json:"upscaling_factor,omitempty"`
	DownscalingFactor float64 `json:"downscaling_factor,omitempty"`
	// AggregationFunction aggregates metrics over the window: mean, max or
	// min. Optional. Default: mean.
	AggregationFunction string `json:"aggregation_function,omitempty"`
}

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

// maxReplicas returns Ray's effective maximum replica count for a
// deployment: num_replicas, or autoscaling's max_replicas (with "auto",
// AutoscalingConfig.default() overlaid with the user's fields).
func (d *Deployment) maxReplicas() int {
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

// validate checks a against Ray's AutoscalingConfig model, whose bounds
// Serve checks at deploy time; auto says num_replicas is "auto", whose
// defaults differ.
func (a *AutoscalingConfig) validate(p *field.Path, auto bool) field.ErrorList {
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
