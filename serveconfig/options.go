package serveconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// AutoscalingConfig mirrors ray.serve.config.AutoscalingConfig. Unset
// fields are not sent; Serve fills in the defaults named below, or, with
// num_replicas [AutoReplicas], the "auto" defaults (min 1, max 100,
// target 2).
type AutoscalingConfig struct {
	// MinReplicas is the fewest replicas; 0 allows scaling to zero.
	// Optional. Default: 1.
	MinReplicas *int `json:"min_replicas,omitempty"`
	// InitialReplicas is the replica count at the first deploy, between
	// MinReplicas and MaxReplicas. Optional. Default: MinReplicas.
	InitialReplicas *int `json:"initial_replicas,omitempty"`
	// MaxReplicas is the most replicas. Optional. Default: 1 (100 with
	// num_replicas "auto").
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

// Replicas is a deployment's num_replicas: unset (the zero value, which
// leaves Serve's default, 1), a count ([ReplicaCount]) or Serve's
// "auto" ([AutoReplicas]). No number means "auto": it is said only with
// AutoReplicas. In JSON and YAML it is a count or the string "auto", as
// in Ray Serve's config files.
type Replicas struct {
	n    int
	mode replicasMode
}

type replicasMode uint8

const (
	replicasUnset replicasMode = iota
	replicasCount
	replicasAuto
)

// ReplicaCount is a fixed number of replicas. A count below 1 is kept as
// given and refused by validation (at num_replicas), never read as a
// mode.
func ReplicaCount(n int) Replicas { return Replicas{n: n, mode: replicasCount} }

// AutoReplicas is Serve's num_replicas "auto": autoscaling with Serve's
// defaults (min 1, max 100, target 2 ongoing requests), overlaid with the
// deployment's autoscaling_config.
func AutoReplicas() Replicas { return Replicas{mode: replicasAuto} }

// IsZero reports whether r is unset (Serve's default).
func (r Replicas) IsZero() bool { return r.mode == replicasUnset }

// IsAuto reports whether r is [AutoReplicas].
func (r Replicas) IsAuto() bool { return r.mode == replicasAuto }

// Count returns the fixed count and true, or 0 and false when r is unset
// or "auto".
func (r Replicas) Count() (int, bool) {
	if r.mode != replicasCount {
		return 0, false
	}
	return r.n, true
}

// String is the count, "auto", or "unset".
func (r Replicas) String() string {
	switch r.mode {
	case replicasCount:
		return strconv.Itoa(r.n)
	case replicasAuto:
		return "auto"
	}
	return "unset"
}

// MarshalJSON writes the count or "auto"; unset is null (a field of it
// with omitzero is left out).
func (r Replicas) MarshalJSON() ([]byte, error) {
	switch r.mode {
	case replicasCount:
		return strconv.AppendInt(nil, int64(r.n), 10), nil
	case replicasAuto:
		return []byte(`"auto"`), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a count or "auto", as Ray reads num_replicas; null
// is unset.
func (r *Replicas) UnmarshalJSON(b []byte) error {
	if r == nil {
		return errNilTarget
	}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*r = Replicas{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil || s != "auto" {
			return fmt.Errorf(`num_replicas must be a count or "auto", got %s`, b)
		}
		*r = AutoReplicas()
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf(`num_replicas must be a count or "auto", got %s`, b)
	}
	*r = ReplicaCount(n)
	return nil
}

// errNilTarget is the error of decoding into a nil pointer.
var errNilTarget = errors.New("serveconfig: UnmarshalJSON into a nil pointer: pass a pointer to a value")

// QueueLimit is a deployment's max_queued_requests: unset (the zero
// value, which leaves Serve's default, no limit), a limit
// ([MaxQueued]) or explicitly no limit ([NoQueueLimit], which overrides
// a limit set in code). In JSON and YAML it is Ray's number, -1 for no
// limit.
type QueueLimit struct {
	n    int
	mode queueMode
}

type queueMode uint8

const (
	queueUnset queueMode = iota
	queueLimited
	queueUnlimited
)

// MaxQueued is a limit of n requests queued at each caller. A limit below
// 1 is kept as given and refused by validation, never read as "no limit".
func MaxQueued(n int) QueueLimit { return QueueLimit{n: n, mode: queueLimited} }

// NoQueueLimit queues without limit (Ray's -1).
func NoQueueLimit() QueueLimit { return QueueLimit{mode: queueUnlimited} }

// IsZero reports whether q is unset (Serve's default).
func (q QueueLimit) IsZero() bool { return q.mode == queueUnset }

// IsUnlimited reports whether q is [NoQueueLimit].
func (q QueueLimit) IsUnlimited() bool { return q.mode == queueUnlimited }

// Limit returns the limit and true, or 0 and false when q is unset or
// unlimited.
func (q QueueLimit) Limit() (int, bool) {
	if q.mode != queueLimited {
		return 0, false
	}
	return q.n, true
}

// String is the limit, "no limit" or "unset".
func (q QueueLimit) String() string {
	switch q.mode {
	case queueLimited:
		return strconv.Itoa(q.n)
	case queueUnlimited:
		return "no limit"
	}
	return "unset"
}

// wire is Ray's number: the limit, or -1.
func (q QueueLimit) wire() int {
	if q.mode == queueUnlimited {
		return -1
	}
	return q.n
}

// MarshalJSON writes Ray's number: the limit, or -1 for no limit; unset
// is null (a field of it with omitzero is left out).
func (q QueueLimit) MarshalJSON() ([]byte, error) {
	if q.mode == queueUnset {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(q.wire()), 10), nil
}

// UnmarshalJSON reads Ray's number: -1 is no limit, any other number a
// limit (validation refuses one below 1); null is unset.
func (q *QueueLimit) UnmarshalJSON(b []byte) error {
	if q == nil {
		return errNilTarget
	}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*q = QueueLimit{}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("max_queued_requests must be a whole number (-1 for no limit), got %s", b)
	}
	if n == -1 {
		*q = NoQueueLimit()
	} else {
		*q = MaxQueued(n)
	}
	return nil
}
