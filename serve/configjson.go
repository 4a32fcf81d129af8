package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A Serve config is encoded by hand, field by field in declaration order,
// producing exactly the bytes encoding/json (without HTML escaping) would:
// the reflection walk was a quarter of Compile. What encoding/json treats
// specially (a runtime_env with its own MarshalJSON, a string needing
// escapes, a user_config value of any other type) goes through
// encoding/json itself. configjson_test.go checks every field of every
// config type against encoding/json, so a field added to a type without
// adding it here fails the tests.

// jsonEnc appends JSON to b; the first error sticks.
type jsonEnc struct {
	b   []byte
	err error
}

// field writes the separator and the key of an object member.
func (e *jsonEnc) field(first *bool, key string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, key...)
	e.b = append(e.b, '"', ':')
}

// slow appends v as encoding/json encodes it.
func (e *jsonEnc) slow(v any) {
	raw, err := marshalReflect(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.b = append(e.b, raw...)
}

// raw appends a json.RawMessage compacted, as encoding/json does.
func (e *jsonEnc) raw(m json.RawMessage) {
	buf := bytes.NewBuffer(e.b)
	if err := json.Compact(buf, m); err != nil {
		e.slow(m) // encoding/json's own error
		return
	}
	e.b = buf.Bytes()
}

func (e *jsonEnc) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			e.slow(s)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// num writes a float64 as encoding/json does: 'f' format, or 'e' with a
// two-digit exponent trimmed below 1e-6 and from 1e21.
func (e *jsonEnc) num(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.slow(f) // encoding/json's UnsupportedValueError
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

func (e *jsonEnc) int(i int) { e.b = strconv.AppendInt(e.b, int64(i), 10) }

// sortedKeys returns m's keys in order, in buf when they fit.
func sortedKeys[V any](buf []string, m map[string]V) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (e *jsonEnc) resources(m map[string]float64) {
	e.b = append(e.b, '{')
	first := true
	var buf [8]string
	for _, k := range sortedKeys(buf[:], m) {
		e.key(&first, k)
		e.num(m[k])
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) labels(m map[string]string) {
	e.b = append(e.b, '{')
	first := true
	var buf [8]string
	for _, k := range sortedKeys(buf[:], m) {
		e.key(&first, k)
		e.str(m[k])
	}
	e.b = append(e.b, '}')
}

// key writes a member whose key is data (escaped as needed).
func (e *jsonEnc) key(first *bool, k string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.str(k)
	e.b = append(e.b, ':')
}

func (e *jsonEnc) object(m map[string]any) {
	e.b = append(e.b, '{')
	first := true
	var buf [8]string
	for _, k := range sortedKeys(buf[:], m) {
		e.key(&first, k)
		e.any(m[k])
	}
	e.b = append(e.b, '}')
}

// any writes the values a user_config or args usually hold; any other
// type goes through encoding/json.
func (e *jsonEnc) any(v any) {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case string:
		e.str(v)
	case bool:
		e.b = strconv.AppendBool(e.b, v)
	case float64:
		e.num(v)
	case int:
		e.int(v)
	case map[string]any:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.object(v)
	case []any:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.b = append(e.b, '[')
		for i, x := range v {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.any(x)
		}
		e.b = append(e.b, ']')
	case *SliceReservation:
		if v == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.reservation(v)
	default:
		e.slow(v)
	}
}

func (e *jsonEnc) application(a *rayApplication) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "name")
	e.str(a.Name)
	if len(a.RoutePrefix) > 0 {
		e.field(&first, "route_prefix")
		e.raw(a.RoutePrefix)
	}
	e.field(&first, "import_path")
	e.str(a.ImportPath)
	if a.RuntimeEnv != nil {
		e.field(&first, "runtime_env")
		e.slow(a.RuntimeEnv)
	}
	if len(a.Deployments) > 0 {
		e.field(&first, "deployments")
		e.b = append(e.b, '[')
		for i := range a.Deployments {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.deployment(&a.Deployments[i])
		}
		e.b = append(e.b, ']')
	}
	if len(a.Args) > 0 {
		e.field(&first, "args")
		e.object(a.Args)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) deployment(d *rayDeployment) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "name")
	e.str(d.Name)
	if d.NumReplicas != 0 {
		e.field(&first, "num_replicas")
		if d.NumReplicas == Auto {
			e.b = append(e.b, `"auto"`...)
		} else {
			e.int(int(d.NumReplicas))
		}
	}
	if d.MaxOngoingRequests != 0 {
		e.field(&first, "max_ongoing_requests")
		e.int(d.MaxOngoingRequests)
	}
	if d.MaxQueuedRequests != 0 {
		e.field(&first, "max_queued_requests")
		e.int(d.MaxQueuedRequests)
	}
	if len(d.UserConfig) > 0 {
		e.field(&first, "user_config")
		e.object(d.UserConfig)
	}
	if d.AutoscalingConfig != nil {
		e.field(&first, "autoscaling_config")
		e.autoscaling(d.AutoscalingConfig)
	}
	if d.GracefulShutdownWaitLoopS != nil {
		e.field(&first, "graceful_shutdown_wait_loop_s")
		e.num(*d.GracefulShutdownWaitLoopS)
	}
	if d.GracefulShutdownTimeoutS != nil {
		e.field(&first, "graceful_shutdown_timeout_s")
		e.num(*d.GracefulShutdownTimeoutS)
	}
	if d.HealthCheckPeriodS != 0 {
		e.field(&first, "health_check_period_s")
		e.num(d.HealthCheckPeriodS)
	}
	if d.HealthCheckTimeoutS != 0 {
		e.field(&first, "health_check_timeout_s")
		e.num(d.HealthCheckTimeoutS)
	}
	if d.RayActorOptions != nil {
		e.field(&first, "ray_actor_options")
		e.actorOptions(d.RayActorOptions)
	}
	if len(d.PlacementGroupBundles) > 0 {
		e.field(&first, "placement_group_bundles")
		e.b = append(e.b, '[')
		for i, b := range d.PlacementGroupBundles {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if b == nil {
				e.b = append(e.b, "null"...)
				continue
			}
			e.resources(b)
		}
		e.b = append(e.b, ']')
	}
	if d.PlacementGroupStrategy != "" {
		e.field(&first, "placement_group_strategy")
		e.str(d.PlacementGroupStrategy)
	}
	if len(d.PlacementGroupBundleLabelSelector) > 0 {
		e.field(&first, "placement_group_bundle_label_selector")
		e.b = append(e.b, '[')
		for i, s := range d.PlacementGroupBundleLabelSelector {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if s == nil {
				e.b = append(e.b, "null"...)
				continue
			}
			e.labels(s)
		}
		e.b = append(e.b, ']')
	}
	if d.MaxReplicasPerNode != 0 {
		e.field(&first, "max_replicas_per_node")
		e.int(d.MaxReplicasPerNode)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) actorOptions(o *rayActorOptions) {
	e.b = append(e.b, '{')
	first := true
	if o.RuntimeEnv != nil {
		e.field(&first, "runtime_env")
		e.slow(o.RuntimeEnv)
	}
	if o.NumCPUs != nil {
		e.field(&first, "num_cpus")
		e.num(*o.NumCPUs)
	}
	if o.NumGPUs != 0 {
		e.field(&first, "num_gpus")
		e.num(o.NumGPUs)
	}
	if o.Memory != 0 {
		e.field(&first, "memory")
		e.num(o.Memory)
	}
	if len(o.Resources) > 0 {
		e.field(&first, "resources")
		e.resources(o.Resources)
	}
	if o.AcceleratorType != "" {
		e.field(&first, "accelerator_type")
		e.str(o.AcceleratorType)
	}
	if len(o.LabelSelector) > 0 {
		e.field(&first, "label_selector")
		e.labels(o.LabelSelector)
	}
	e.b = append(e.b, '}')
}

func (e *jsonEnc) autoscaling(a *AutoscalingConfig) {
	e.b = append(e.b, '{')
	first := true
	if a.MinReplicas != nil {
		e.field(&first, "min_replicas")
		e.int(*a.MinReplicas)
	}
	if a.InitialReplicas != nil {
		e.field(&first, "initial_replicas")
		e.int(*a.InitialReplicas)
	}
	if a.MaxReplicas != 0 {
		e.field(&first, "max_replicas")
		e.int(a.MaxReplicas)
	}
	floats := [...]struct {
		key string
		v   float64
		set bool
	}{
		{"target_ongoing_requests", a.TargetOngoingRequests, a.TargetOngoingRequests != 0},
		{"upscale_delay_s", deref(a.UpscaleDelayS), a.UpscaleDelayS != nil},
		{"downscale_delay_s", deref(a.DownscaleDelayS), a.DownscaleDelayS != nil},
		{"downscale_to_zero_delay_s", deref(a.DownscaleToZeroDelayS), a.DownscaleToZeroDelayS != nil},
		{"look_back_period_s", a.LookBackPeriodS, a.LookBackPeriodS != 0},
		{"upscaling_factor", a.UpscalingFactor, a.UpscalingFactor != 0},
		{"downscaling_factor", a.DownscalingFactor, a.DownscalingFactor != 0},
	}
	for _, f := range floats {
		if f.set {
			e.field(&first, f.key)
			e.num(f.v)
		}
	}
	if a.AggregationFunction != "" {
		e.field(&first, "aggregation_function")
		e.str(a.AggregationFunction)
	}
	e.b = append(e.b, '}')
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func (e *jsonEnc) reservation(r *SliceReservation) {
	e.b = append(e.b, '{')
	first := true
	e.field(&first, "version")
	e.int(r.Version)
	e.field(&first, "topology")
	e.str(r.Topology)
	e.field(&first, "accelerator_version")
	e.str(r.AcceleratorVersion)
	e.field(&first, "accelerator_type")
	e.str(r.AcceleratorType)
	e.field(&first, "pod_type")
	e.str(r.PodType)
	e.field(&first, "num_hosts")
	e.int(r.NumHosts)
	e.field(&first, "chips_per_host")
	e.int(r.ChipsPerHost)
	e.field(&first, "num_bundles")
	e.int(r.NumBundles)
	e.field(&first, "resources_per_bundle")
	if r.ResourcesPerBundle == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.resources(r.ResourcesPerBundle)
	}
	e.field(&first, "strategy")
	e.str(string(r.Strategy))
	e.field(&first, "head_reservation_timeout_s")
	e.num(r.HeadReservationTimeoutS)
	e.b = append(e.b, '}')
}

// encodeConfig encodes a Serve application config.
func encodeConfig(a *rayApplication) ([]byte, error) {
	e := jsonEnc{b: make([]byte, 0, 1024)}
	e.application(a)
	if e.err != nil {
		return nil, e.err
	}
	return slices.Clip(e.b), nil
}

// Compile-time check that the types encoded here keep the shapes they
// are written for.
var _ json.Marshaler = NumReplicas(0)
