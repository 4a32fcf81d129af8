package serveconfig

import (
	"encoding/json"
	"fmt"
	"strconv"
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

// NumReplicas is a replica count or [Auto].
type NumReplicas int

// Auto is Serve's num_replicas "auto": autoscaling with Serve's defaults.
const Auto NumReplicas = -1

// MarshalJSON writes "auto" for Auto and the count otherwise.
func (n NumReplicas) MarshalJSON() ([]byte, error) {
	if n == Auto {
		return []byte(`"auto"`), nil
	}
	return strconv.AppendInt(nil, int64(n), 10), nil
}

// UnmarshalJSON reads a count or "auto".
func (n *NumReplicas) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != "auto" {
			return fmt.Errorf(`serve: num_replicas must be an int or "auto", got %q`, s)
		}
		*n = Auto
		return nil
	}
	var i int
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf(`serve: num_replicas must be an int or "auto": %w`, err)
	}
	*n = NumReplicas(i)
	return nil
}
