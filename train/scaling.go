package train

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// ScalingConfig mirrors ray.train.ScalingConfig (v2).
type ScalingConfig struct {
	// NumWorkers is the number of workers. With UseTPU it must be a
	// multiple of the workers per slice (one per host by default).
	// Optional. Default: NumSlices × workers per slice with UseTPU, else 1.
	NumWorkers int `json:"num_workers,omitempty"`
	// NumSlices is the number of TPU slices (raytpu's shorthand: Ray
	// derives it from NumWorkers). Optional. Default: 1, or NumWorkers /
	// workers per slice.
	NumSlices int `json:"num_slices,omitempty"`
	// UseTPU runs one worker per TPU host (SPMD). Optional. Default: false.
	UseTPU bool `json:"use_tpu,omitempty"`
	// UseGPU requests one GPU per worker. Optional. Default: false.
	// Exclusive with UseTPU.
	UseGPU bool `json:"use_gpu,omitempty"`
	// Accelerator is the TPU generation (v6e, TPU-V6E, v5litepod, tpu7x).
	// Required with UseTPU and more than one worker. Ray's accelerator_type.
	Accelerator string `json:"accelerator_type,omitempty"`
	// Topology of each slice, e.g. "4x4" or "2x2x2". Required with UseTPU
	// and more than one worker.
	Topology string `json:"topology,omitempty"`
	// ChipsPerHost sets the TPU each worker requests (one worker per host
	// of that many chips), e.g. 4 to run v6e 2x4 as two workers. Optional.
	// Default: Ray's chips per host for the topology.
	ChipsPerHost int `json:"chips_per_host,omitempty"`
	// ResourcesPerWorker are each worker's resources. With UseTPU it must
	// hold a positive "TPU". Optional. Default: {CPU: 1, TPU: chips per host}.
	ResourcesPerWorker map[string]float64 `json:"resources_per_worker,omitempty"`
	// PlacementStrategy of the worker placement group. Optional.
	// Default: PACK (Ray Train's default, also for TPU slices).
	PlacementStrategy placement.Strategy `json:"placement_strategy,omitempty"`
	// LabelSelector constrains every worker's node, in Ray's syntax ("v",
	// "!v", "in(a,b)", "!in(a,b)"; placement.LabelSelector), checked as Ray
	// checks it when it creates the workers. Forbidden with UseTPU and more
	// than one worker (Ray pins the slice itself). Optional.
	LabelSelector map[string]string `json:"label_selector,omitempty"`

	// MinWorkers and MaxWorkers make the worker group elastic, Ray's
	// num_workers=(min, max): Ray Train starts the group with as many
	// workers as the cluster holds between the two and resizes it (a
	// restart from the latest checkpoint, not counted as a failure) when
	// that changes. With UseTPU both must be multiples of the workers per
	// slice, and Ray counts only intact slices (every host alive). Set both
	// or neither; NumWorkers and NumSlices must then be unset. Optional.
	// Default: a fixed group.
	MinWorkers int `json:"min_workers,omitempty"`
	MaxWorkers int `json:"max_workers,omitempty"`
	// ElasticResizeMonitorInterval is how often a running elastic group
	// considers resizing. Optional. Default: 60s (Ray's
	// elastic_resize_monitor_interval_s).
	ElasticResizeMonitorInterval time.Duration `json:"elastic_resize_monitor_interval,omitempty"`
}

// The paths of a JaxTrainer's sections, built once (paths are immutable)
// so that compiling a valid trainer allocates none.
var (
	trainerPath    = field.NewPath("trainer")
	scalingPath    = trainerPath.Child("scaling_config")
	scalingSlice   = scalingFields(scalingPath)
	runtimeEnvPath = trainerPath.Child("runtime_env")
)

// scalingFields are the paths of ScalingConfig's slice arguments as
// placement sees them: Ray Train passes resources_per_worker to
// SlicePlacementGroup as resources_per_bundle and its placement_strategy as
// the strategy.
func scalingFields(p *field.Path) placement.Fields {
	return placement.Fields{
		Topology:           p.Child("topology"),
		Accelerator:        p.Child("accelerator_type"),
		ChipsPerHost:       p.Child("chips_per_host"),
		NumSlices:          p.Child("num_slices"),
		ResourcesPerBundle: p.Child("resources_per_worker"),
		Strategy:           p.Child("placement_strategy"),
	}
}

// compile checks s and builds its launcher arguments and, with UseTPU and
// more than one worker, its slice group. f holds the paths of s's slice
// fields (scalingFields(p)); startTimeout is the worker group start
// timeout, which Ray Train also gives the slice head reservation. It takes
// one of three paths: CPU (or GPU) workers, one TPU worker, or TPU slices.
func (s ScalingConfig) compile(p *field.Path, f placement.Fields, startTimeout time.Duration) (rayruntime.TrainScaling, *placement.SliceGroup, field.ErrorList) {
	errs := s.validateFields(p)
	errs = append(errs, placement.ValidateLabelSelector(p.Child("label_selector"), s.LabelSelector)...)
	strategy := s.PlacementStrategy
	if !strategy.Valid() {
		strategy = placement.Pack // Ray Train's default; a bad value is reported above
	}
	if s.UseTPU && s.UseGPU {
		errs = append(errs, field.Forbidden(p.Child("use_gpu"), "use_tpu and use_gpu are exclusive"))
	}
	// out is encoded at once and never kept, so it may share s's maps.
	out := rayruntime.TrainScaling{
		UseTPU: s.UseTPU, UseGPU: s.UseGPU, PlacementStrategy: string(strategy),
		LabelSelector: s.LabelSelector, ResourcesPerWorker: s.ResourcesPerWorker,
	}
	limErrs := s.checkLimits(p, f)
	errs = append(errs, limErrs...)
	el, eerrs := s.elastic(p)
	errs = append(errs, eerrs...)
	out.MinWorkers, out.ElasticResizeMonitorIntervalS = el.min, el.intervalS
	if !s.UseTPU {
		return s.compileNoTPU(f, out, el, errs)
	}
	errs = append(errs, s.checkTPUResources(f)...)
	if (s.NumWorkers == 1 || el.max == 1) && s.NumSlices <= 1 && s.Topology == "" && s.Accelerator == "" {
		// One TPU worker needs neither topology nor accelerator (Ray's rule).
		out.NumWorkers = 1
		if _, hasTPU := s.ResourcesPerWorker[rayvocab.ResourceTPU]; !hasTPU {
			out.ResourcesPerWorker = map[string]float64{rayvocab.ResourceTPU: 1}
		}
		return out, nil, errs
	}
	return s.compileSlices(p, f, startTimeout, strategy, out, el, len(limErrs) > 0, errs)
}

// compileNoTPU is compile's path for CPU or GPU workers: no slice fields,
// no TPU.
func (s ScalingConfig) compileNoTPU(f placement.Fields, out rayruntime.TrainScaling, el elasticRange, errs field.ErrorList) (rayruntime.TrainScaling, *placement.SliceGroup, field.ErrorList) {
	if tpuReq, hasTPU := s.ResourcesPerWorker[rayvocab.ResourceTPU]; hasTPU && tpuReq > 0 {
		errs = append(errs, field.Forbidden(f.ResourcesPerBundle.Key(rayvocab.ResourceTPU), "TPU needs use_tpu: true"))
	}
	for _, c := range []struct {
		path *field.Path
		set  bool
	}{{f.Accelerator, s.Accelerator != ""}, {f.Topology, s.Topology != ""}, {f.NumSlices, s.NumSlices != 0}, {f.ChipsPerHost, s.ChipsPerHost != 0}} {
		if c.set {
			errs = append(errs, field.Forbidden(c.path, "applies only with use_tpu: true"))
		}
	}
	out.NumWorkers = max(s.NumWorkers, el.max, 1) // Ray's default: 1
	out.AcceleratorType = s.Accelerator
	return out, nil, errs
}

// checkTPUResources checks resourcesPerWorker and chipsPerHost of TPU
// workers.
func (s ScalingConfig) checkTPUResources(f placement.Fields) field.ErrorList {
	var errs field.ErrorList
	tpuReq, hasTPU := s.ResourcesPerWorker[rayvocab.ResourceTPU]
	if hasTPU && tpuReq == 0 {
		errs = append(errs, field.Invalid(f.ResourcesPerBundle.Key(rayvocab.ResourceTPU), tpuReq,
			"use_tpu is true: request a positive TPU, or leave TPU out for one worker per host"))
	}
	if len(s.ResourcesPerWorker) > 0 && !hasTPU {
		errs = append(errs, field.Required(f.ResourcesPerBundle.Key(rayvocab.ResourceTPU),
			"with use_tpu, resources_per_worker must hold TPU (Ray counts 0 TPU and rejects the config); leave resources_per_worker empty for one worker per host"))
	}
	if hasTPU && s.ChipsPerHost != 0 {
		errs = append(errs, field.Forbidden(f.ChipsPerHost, "set either chips_per_host or resources_per_worker[TPU], not both"))
	}
	return errs
}

// compileSlices is compile's path for TPU workers on slices: the slice
// shape from the topology and accelerator, then the number of slices from
// the worker counts. pastLimits says a count is past its limit (reported
// already), so no group is built from it.
func (s ScalingConfig) compileSlices(p *field.Path, f placement.Fields, startTimeout time.Duration, strategy placement.Strategy,
	out rayruntime.TrainScaling, el elasticRange, pastLimits bool, errs field.ErrorList) (rayruntime.TrainScaling, *placement.SliceGroup, field.ErrorList) {
	if s.Topology == "" {
		errs = append(errs, field.Required(f.Topology, "use_tpu with more than one worker needs the slice topology, e.g. 4x4"))
	}
	if s.Accelerator == "" {
		errs = append(errs, field.Required(f.Accelerator, "use_tpu with more than one worker needs the TPU generation, e.g. v6e or TPU-V6E"))
	}
	if len(s.LabelSelector) > 0 {
		errs = append(errs, field.Forbidden(p.Child("label_selector"), "Ray Train pins TPU workers to a slice itself; a label selector is not allowed with use_tpu"))
	}
	if e := tpu.ChipCountTopology(f.Topology, s.Topology, s.Accelerator, tpu.TargetRay); e != nil {
		return out, nil, append(errs, e)
	}
	if s.Topology == "" || s.Accelerator == "" {
		// The field that is set is checked all the same (a bad accelerator
		// is reported with the missing topology); the missing one is
		// reported above.
		_, rerrs := tpu.SliceSpec{Generation: s.Accelerator, Topology: s.Topology}.Resolve(tpu.TargetRay,
			tpu.SliceFields{Generation: f.Accelerator, Topology: f.Topology})
		for _, e := range rerrs {
			if e.Type != field.TypeRequired {
				errs = append(errs, e)
			}
		}
		return out, nil, errs
	}
	shape, serrs := s.sliceShape(f, strategy, startTimeout)
	errs = append(errs, serrs...)
	if shape == nil || pastLimits {
		return out, nil, errs // past a limit, the counts below would be too
	}
	sl := shape.Slice
	numSlices, cerrs := s.numSlices(p, shape, el)
	errs = append(errs, cerrs...)
	if len(errs) > 0 {
		return out, nil, errs
	}
	if numSlices > 1 && !sl.Generation.Multislice {
		return out, nil, append(errs, field.Invalid(f.NumSlices, numSlices, sl.Generation.Name+" does not support multislice; use one slice"))
	}
	group, gerrs := shape.Group(numSlices)
	if len(gerrs) > 0 {
		return out, nil, append(errs, gerrs...)
	}
	out.NumWorkers = shape.BundlesPerSlice * numSlices
	out.AcceleratorType = group.AcceleratorType
	out.Topology = group.Topology
	out.ResourcesPerWorker = group.BundleResources
	return out, group, nil
}

// sliceShape resolves the slice shape of TPU workers. Ray Train passes
// resources_per_worker (defaulted by get_tpu_worker_resources) to
// SlicePlacementGroup as resources_per_bundle, without chips_per_vm, and
// adds accelerator_type:<type>: 0.001 to every worker's resources
// (ScalingConfig's _resources_per_worker_not_none). Values reported by
// checkTPUResources are left out, so that placement does not report them
// again.
func (s ScalingConfig) sliceShape(f placement.Fields, strategy placement.Strategy, startTimeout time.Duration) (*placement.Shape, field.ErrorList) {
	var perWorker map[string]float64
	if len(s.ResourcesPerWorker) > 0 || s.ChipsPerHost > 0 {
		perWorker = make(map[string]float64, len(s.ResourcesPerWorker)+1)
		for k, v := range s.ResourcesPerWorker {
			if v > 0 || v == 0 && k != rayvocab.ResourceTPU {
				perWorker[k] = v
			}
		}
		if s.ChipsPerHost > 0 {
			perWorker[rayvocab.ResourceTPU] = float64(s.ChipsPerHost)
		}
	}
	sf := f
	if s.ChipsPerHost > 0 {
		sf.BundleTPU = f.ChipsPerHost // the bundle's TPU is chipsPerHost's
	}
	shape, errs := placement.SliceSpec{
		Topology:               s.Topology,
		Accelerator:            s.Accelerator,
		ResourcesPerBundle:     perWorker,
		Strategy:               strategy,
		HeadReservationTimeout: startTimeout,
	}.Resolve(sf)
	if shape == nil {
		return nil, errs
	}
	sl := shape.Slice
	if s.ChipsPerHost > 0 {
		if e := sl.Generation.CheckChipsPerHost(sl.Topology, s.ChipsPerHost, f.ChipsPerHost); e != nil {
			errs = append(errs, e)
		}
	}
	key := rayvocab.AcceleratorTypeResource(sl.RayAcceleratorType())
	if _, set := shape.BundleResources[key]; !set {
		shape.BundleResources[key] = rayvocab.AcceleratorConstraintAmount
	}
	return shape, errs
}

// numSlices is how many slices the worker counts ask for: numWorkers (a
// multiple of the workers per slice, agreeing with numSlices), else
// maxWorkers (elastic: Ray requests resources for max_workers), else
// numSlices.
func (s ScalingConfig) numSlices(p *field.Path, shape *placement.Shape, el elasticRange) (int, field.ErrorList) {
	sl, perSlice := shape.Slice, shape.BundlesPerSlice
	switch {
	case s.NumWorkers > 0 && s.NumWorkers%perSlice != 0:
		return 0, field.ErrorList{field.Invalid(p.Child("num_workers"), s.NumWorkers,
			fmt.Sprintf("must be a multiple of %d, the workers per %s %s slice", perSlice, sl.Generation.Name, sl.Topology))}
	case s.NumWorkers > 0 && s.NumSlices > 0 && s.NumWorkers != s.NumSlices*perSlice:
		return 0, field.ErrorList{field.Invalid(p.Child("num_workers"), s.NumWorkers,
			fmt.Sprintf("num_slices %d of %s %s needs %d workers; set one of the two", s.NumSlices, sl.Generation.Name, sl.Topology, s.NumSlices*perSlice))}
	case s.NumWorkers > 0:
		return s.NumWorkers / perSlice, nil
	case el.max > 0:
		// Ray's _validate_tpu_config checks max_workers, then min_workers.
		var errs field.ErrorList
		for _, c := range []struct {
			name string
			n    int
		}{{"max_workers", el.max}, {"min_workers", el.min}} {
			if c.n%perSlice != 0 {
				errs = append(errs, field.Invalid(p.Child(c.name), c.n,
					fmt.Sprintf("must be a multiple of %d, the workers per %s %s slice (Ray scales TPU groups by whole slices)", perSlice, sl.Generation.Name, sl.Topology)))
			}
		}
		return el.max / perSlice, errs
	}
	return max(s.NumSlices, 1), nil
}

// checkLimits reports every count of s past its limit (placement's limits
// table): the worker counts past MaxWorkers, NumSlices past MaxSlices.
// compile checks them before it multiplies or allocates anything by them.
func (s ScalingConfig) checkLimits(p *field.Path, f placement.Fields) field.ErrorList {
	var errs field.ErrorList
	for _, c := range [...]struct {
		name string
		n    int
	}{{"num_workers", s.NumWorkers}, {"min_workers", s.MinWorkers}, {"max_workers", s.MaxWorkers}} {
		if c.n > placement.MaxWorkers {
			errs = append(errs, field.TooMany(p.Child(c.name), c.n, placement.MaxWorkers, placement.SourceWorkers))
		}
	}
	if s.NumSlices > placement.MaxSlices {
		errs = append(errs, field.TooMany(f.NumSlices, s.NumSlices, placement.MaxSlices, placement.SourceSlices))
	}
	return errs
}

// Messages of ScalingConfig's field rules.
const (
	msgCountNegative        = "cannot be negative"
	msgChipsPerHostNegative = "must be positive, or 0 for Ray's chips per host"
)

// fieldsHold reports whether every rule of validateFields holds; it
// allocates nothing, so a valid config costs no error list.
func (s *ScalingConfig) fieldsHold() bool {
	if s.NumWorkers < 0 || s.NumSlices < 0 || s.ChipsPerHost < 0 || s.MinWorkers < 0 || s.MaxWorkers < 0 {
		return false
	}
	if s.PlacementStrategy != "" && !s.PlacementStrategy.Valid() {
		return false
	}
	for _, v := range s.ResourcesPerWorker {
		if !(v >= 0) {
			return false
		}
	}
	return true
}

// validateFields reports every broken rule of s that needs no other field
// and no catalog, in the order of ScalingConfig's fields: counts that are
// negative, a negative (or NaN) resource, an unknown placement strategy.
func (s *ScalingConfig) validateFields(p *field.Path) field.ErrorList {
	if s.fieldsHold() {
		return nil
	}
	var errs field.ErrorList
	negative := func(name string, n int, msg string) {
		if n < 0 {
			errs = append(errs, field.Invalid(p.Child(name), n, msg))
		}
	}
	negative("num_workers", s.NumWorkers, msgCountNegative)
	negative("num_slices", s.NumSlices, msgCountNegative)
	negative("chips_per_host", s.ChipsPerHost, msgChipsPerHostNegative)
	for _, k := range slices.Sorted(maps.Keys(s.ResourcesPerWorker)) {
		if v := s.ResourcesPerWorker[k]; !(v >= 0) {
			errs = append(errs, field.Invalid(p.Child("resources_per_worker").Key(k), v, msgCountNegative))
		}
	}
	if s.PlacementStrategy != "" && !s.PlacementStrategy.Valid() {
		errs = append(errs, field.NotSupported(p.Child("placement_strategy"), string(s.PlacementStrategy), placement.Strategies()))
	}
	negative("min_workers", s.MinWorkers, msgCountNegative)
	negative("max_workers", s.MaxWorkers, msgCountNegative)
	return errs
}
