package data

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// MapBatches mirrors Dataset.map_batches: apply a Python function or
// callable class to batches of rows.
//
// Ray Data has no slice or multi-host notion: each task or actor runs on
// one host, so Resources[TPU] can be at most the chips of one host of
// Accelerator.
type MapBatches struct {
	// Fn is the Python function or callable class as "module:function" or
	// "module:Class", importable from the job's working directory.
	// Required. A class runs in an actor pool (Ray's default for classes).
	Fn string
	// FnKwargs are keyword arguments of every call. Optional.
	FnKwargs map[string]any
	// FnConstructorKwargs are the class's constructor keyword arguments
	// (fn_constructor_kwargs). Optional; classes only.
	FnConstructorKwargs map[string]any
	// BatchSize is the rows per call. Optional. Default: Ray's (None: a
	// whole block). Required when Resources holds GPU (Ray's rule).
	BatchSize int
	// BatchFormat is "default", "numpy", "pandas" or "pyarrow". Optional.
	// Default: "default".
	BatchFormat string
	// Concurrency is Ray's concurrency=n: n tasks, or an actor pool of n
	// for a class. Optional. Exclusive with ActorPool.
	Concurrency int
	// ActorPool runs Fn, a class, in an actor pool (compute=
	// ActorPoolStrategy(...)). Optional. Exclusive with Concurrency.
	ActorPool *ActorPool
	// Resources each task or actor needs: "CPU" (num_cpus; Ray's default
	// is 1 when absent, so set CPU: 0 to ask for none), "GPU" (num_gpus),
	// "memory" (bytes), "TPU" (chips: 1, 2, 4 or 8) and custom resources.
	// Optional.
	Resources map[string]float64
	// Accelerator is the TPU generation every task or actor must land on
	// (v6e, TPU-V6E, v5litepod), Ray's accelerator_type. Optional; with
	// Resources[TPU] it bounds the chips by the generation's host size.
	Accelerator string
	// LabelSelector constrains the nodes, in Ray's syntax ("v", "!v",
	// "in(a,b)", "!in(a,b)"; placement.LabelSelector), checked as Ray checks
	// it when it submits the tasks or actors. Optional.
	LabelSelector map[string]string
	// MaxCalls restarts a task worker after this many calls. Optional.
	MaxCalls int
	// MaxRestarts is how often Ray restarts an actor of the pool whose
	// process died (max_restarts); the calls it had in flight are retried
	// on the restarted actor. Only for a class Fn. Optional. Default: nil,
	// unbounded (-1), as in Ray Data 2.60; a pointer to 0 makes a dead
	// actor fail the pipeline.
	MaxRestarts *int
	// KeepsRowCount tells Ray the function returns as many rows as it is
	// given (udf_modifying_row_count=False), which also lets [Predict]
	// count rows through this step. Optional. Default: false.
	KeepsRowCount bool
}

// ActorPool mirrors ray.data.ActorPoolStrategy. Set Size for a fixed pool,
// or MinSize and MaxSize for an autoscaling one.
type ActorPool struct {
	Size        int `json:"size,omitempty"`
	MinSize     int `json:"min_size,omitempty"`
	MaxSize     int `json:"max_size,omitempty"`
	InitialSize int `json:"initial_size,omitempty"`
	// MaxTasksInFlightPerActor bounds queued calls per actor. Optional.
	MaxTasksInFlightPerActor int `json:"max_tasks_in_flight_per_actor,omitempty"`
}

// BatchFormats returns map_batches' batch formats, in order; a fresh slice
// each call.
func BatchFormats() []string { return slices.Clone(batchFormats) }

var batchFormats = []string{"default", "numpy", "pandas", "pyarrow"}

// validTPUChips are Ray's TPU_VALID_CHIP_OPTIONS: the TPU counts a task or
// actor may request.
var validTPUChips = []float64{1, 2, 4, 8}

// mapBatchesKwargs are map_batches' keyword arguments. compute is an
// object the launcher turns into ray.data.ActorPoolStrategy(**compute).
type mapBatchesKwargs struct {
	Fn                  string             `json:"fn"`
	BatchSize           int                `json:"batch_size,omitempty"`
	BatchFormat         string             `json:"batch_format,omitempty"`
	FnKwargs            map[string]any     `json:"fn_kwargs,omitempty"`
	FnConstructorKwargs map[string]any     `json:"fn_constructor_kwargs,omitempty"`
	Compute             *ActorPool         `json:"compute,omitempty"`
	Concurrency         int                `json:"concurrency,omitempty"`
	NumCPUs             *float64           `json:"num_cpus,omitempty"`
	NumGPUs             float64            `json:"num_gpus,omitempty"`
	Memory              float64            `json:"memory,omitempty"`
	Resources           map[string]float64 `json:"resources,omitempty"`
	AcceleratorType     string             `json:"accelerator_type,omitempty"`
	LabelSelector       map[string]string  `json:"label_selector,omitempty"`
	MaxCalls            int                `json:"max_calls,omitempty"`
	MaxRestarts         *int               `json:"max_restarts,omitempty"`
	UDFModifyingRowCnt  *bool              `json:"udf_modifying_row_count,omitempty"`
}

func (m MapBatches) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	var errs field.ErrorList
	if e := checkImport(p.Child("fn"), m.Fn, "function"); e != nil {
		errs = append(errs, e)
	}
	kw := mapBatchesKwargs{
		Fn: m.Fn, BatchSize: m.BatchSize, BatchFormat: m.BatchFormat,
		FnKwargs: m.FnKwargs, FnConstructorKwargs: m.FnConstructorKwargs,
		Concurrency: m.Concurrency, LabelSelector: m.LabelSelector, MaxCalls: m.MaxCalls,
		Compute: m.ActorPool, MaxRestarts: m.MaxRestarts,
	}
	if m.KeepsRowCount {
		f := false
		kw.UDFModifyingRowCnt = &f
	}
	errs = append(errs, placement.ValidateLabelSelector(p.Child("labelSelector"), m.LabelSelector)...)
	if m.BatchSize < 0 {
		errs = append(errs, field.Invalid(p.Child("batchSize"), m.BatchSize, "must be positive, or 0 for Ray's default"))
	} else if m.BatchSize > placement.MaxBatchSize {
		errs = append(errs, field.TooMany(p.Child("batchSize"), m.BatchSize, placement.MaxBatchSize, placement.SourceBatchSize))
	}
	if m.BatchFormat != "" && !slices.Contains(batchFormats, m.BatchFormat) {
		errs = append(errs, field.NotSupported(p.Child("batchFormat"), m.BatchFormat, BatchFormats()))
	}
	if m.MaxRestarts != nil && *m.MaxRestarts < -1 {
		errs = append(errs, field.Invalid(p.Child("maxRestarts"), *m.MaxRestarts, "must be -1 (unbounded), 0 (no restart) or positive"))
	}
	if m.MaxCalls < 0 {
		errs = append(errs, field.Invalid(p.Child("maxCalls"), m.MaxCalls, "must be positive, or 0 for no limit"))
	}
	for _, c := range []struct {
		name string
		v    map[string]any
	}{{"fnKwargs", m.FnKwargs}, {"fnConstructorKwargs", m.FnConstructorKwargs}} {
		if _, err := json.Marshal(c.v); err != nil {
			errs = append(errs, field.Invalid(p.Child(c.name), fmt.Sprintf("%T", c.v), "must marshal to JSON: "+err.Error()))
		}
	}
	errs = append(errs, m.checkCompute(p)...)
	rerrs := m.resources(p, &kw)
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return rayruntime.Op{Op: "map_batches"}, errs
	}
	return newOp("map_batches", kw), nil
}

func (m MapBatches) checkCompute(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Concurrency < 0 {
		errs = append(errs, field.Invalid(p.Child("concurrency"), m.Concurrency, "must be positive, or 0 for Ray's default"))
	} else if m.Concurrency > placement.MaxActors {
		errs = append(errs, field.TooMany(p.Child("concurrency"), m.Concurrency, placement.MaxActors, placement.SourceActors))
	}
	a := m.ActorPool
	if a == nil {
		return errs
	}
	ap := p.Child("actorPool")
	if m.Concurrency != 0 {
		errs = append(errs, field.Forbidden(p.Child("concurrency"), "set concurrency or actorPool, not both"))
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"size", a.Size}, {"minSize", a.MinSize}, {"maxSize", a.MaxSize}, {"initialSize", a.InitialSize}, {"maxTasksInFlightPerActor", a.MaxTasksInFlightPerActor}} {
		if c.v < 0 {
			errs = append(errs, field.Invalid(ap.Child(c.name), c.v, "cannot be negative"))
		} else if c.name != "maxTasksInFlightPerActor" && c.v > placement.MaxActors {
			errs = append(errs, field.TooMany(ap.Child(c.name), c.v, placement.MaxActors, placement.SourceActors))
		}
	}
	switch {
	case a.Size > 0 && (a.MinSize > 0 || a.MaxSize > 0):
		errs = append(errs, field.Forbidden(ap.Child("size"), "set size for a fixed pool, or minSize and maxSize for an autoscaling one, not both"))
	case a.Size == 0 && a.MinSize == 0 && a.MaxSize == 0:
		errs = append(errs, field.Required(ap.Child("size"), "a pool size, or minSize and maxSize"))
	case a.MaxSize > 0 && a.MinSize > a.MaxSize:
		errs = append(errs, field.Invalid(ap.Child("minSize"), a.MinSize, "must not exceed maxSize "+strconv.Itoa(a.MaxSize)))
	case a.InitialSize > 0 && (a.InitialSize < a.MinSize || a.MaxSize > 0 && a.InitialSize > a.MaxSize):
		errs = append(errs, field.Invalid(ap.Child("initialSize"), a.InitialSize, "must lie between minSize and maxSize"))
	}
	return errs
}

// resources splits Resources into Ray's keyword arguments and checks the
// TPU request against Ray's chip options and the generation's host size.
func (m MapBatches) resources(p *field.Path, kw *mapBatchesKwargs) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("resources")
	var gen *tpu.Generation
	if m.Accelerator != "" {
		g, e := tpu.ResolveGeneration(m.Accelerator, p.Child("accelerator"))
		if e != nil {
			errs = append(errs, e)
		} else {
			gen = g
			kw.AcceleratorType = g.RayAcceleratorType()
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Resources)) {
		v := m.Resources[k]
		if v < 0 {
			errs = append(errs, field.Invalid(rp.Key(k), v, "cannot be negative"))
			continue
		}
		switch k {
		case rayvocab.ResourceCPU:
			kw.NumCPUs = &v
		case rayvocab.ResourceGPU:
			kw.NumGPUs = v
			if v > 0 && m.BatchSize == 0 {
				errs = append(errs, field.Required(p.Child("batchSize"), "Ray requires a batch size when map_batches requests GPUs"))
			}
		case rayvocab.ResourceMemory:
			kw.Memory = v
		default:
			if k == rayvocab.ResourceTPU {
				errs = append(errs, checkTPU(rp.Key(k), v, gen)...)
			}
			if kw.Resources == nil {
				kw.Resources = map[string]float64{}
			}
			kw.Resources[k] = v
		}
	}
	return errs
}

func checkTPU(p *field.Path, chips float64, gen *tpu.Generation) field.ErrorList {
	if chips == 0 {
		return nil
	}
	if gen != nil {
		if most := slices.Max(gen.ChipsPerHostOptions); chips > float64(most) {
			return field.ErrorList{field.Invalid(p, chips, fmt.Sprintf(
				"a %s host holds at most %d chips, and a Ray Data task or actor runs on one host; "+
					"a model that needs several hosts belongs in Serve or Train with a topology "+
					"(serve.Deployment or train.JaxTrainer with Accelerator %s and a Topology)",
				gen.Name, most, gen.Name))}
		}
	}
	if !slices.Contains(validTPUChips, chips) {
		return field.ErrorList{field.NotSupported(p, strconv.FormatFloat(chips, 'g', -1, 64), []string{"1", "2", "4", "8"}).
			WithDetail("Ray accepts only these TPU counts per task or actor (TPU_VALID_CHIP_OPTIONS)")}
	}
	return nil
}

func (m MapBatches) keepsRows() bool { return m.KeepsRowCount }

func (m MapBatches) clone() Step {
	m.FnKwargs = cloneJSONMap(m.FnKwargs)
	m.FnConstructorKwargs = cloneJSONMap(m.FnConstructorKwargs)
	m.Resources = maps.Clone(m.Resources)
	m.LabelSelector = maps.Clone(m.LabelSelector)
	if m.ActorPool != nil {
		a := *m.ActorPool
		m.ActorPool = &a
	}
	if m.MaxRestarts != nil {
		n := *m.MaxRestarts
		m.MaxRestarts = &n
	}
	return m
}

// cloneJSONMap deep-copies a map of JSON-able values through a JSON round
// trip; a map that does not marshal is copied shallowly (and reported at
// compile time).
func cloneJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return maps.Clone(m)
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return maps.Clone(m)
	}
	return out
}
