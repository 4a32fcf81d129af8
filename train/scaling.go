package train

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// ScalingConfig mirrors ray.train.ScalingConfig (v2).
type ScalingConfig struct {
	// NumWorkers is the number of workers. With UseTPU it must be a
	// multiple of the workers per slice (one per host by default).
	// Optional. Default: NumSlices × workers per slice with UseTPU, else 1.
	NumWorkers int
	// NumSlices is the number of TPU slices (raytpu's shorthand: Ray
	// derives it from NumWorkers). Optional. Default: 1, or NumWorkers /
	// workers per slice.
	NumSlices int
	// UseTPU runs one worker per TPU host (SPMD). Optional. Default: false.
	UseTPU bool
	// UseGPU requests one GPU per worker. Optional. Default: false.
	// Exclusive with UseTPU.
	UseGPU bool
	// Accelerator is the TPU generation (v6e, TPU-V6E, v5litepod, tpu7x).
	// Required with UseTPU and more than one worker. Ray's accelerator_type.
	Accelerator string
	// Topology of each slice, e.g. "4x4" or "2x2x2". Required with UseTPU
	// and more than one worker.
	Topology string
	// ChipsPerHost sets the TPU each worker requests (one worker per host
	// of that many chips), e.g. 4 to run v6e 2x4 as two workers. Optional.
	// Default: Ray's chips per host for the topology.
	ChipsPerHost int
	// ResourcesPerWorker are each worker's resources. With UseTPU it must
	// hold a positive "TPU". Optional. Default: {CPU: 1, TPU: chips per host}.
	ResourcesPerWorker map[string]float64
	// PlacementStrategy of the worker placement group. Optional.
	// Default: PACK (Ray Train's default, also for TPU slices).
	PlacementStrategy placement.Strategy
	// LabelSelector constrains every worker's node. Forbidden with UseTPU
	// and more than one worker (Ray pins the slice itself). Optional.
	LabelSelector map[string]string
}

// LauncherScaling holds ScalingConfig's keyword arguments.
type LauncherScaling struct {
	NumWorkers         int                `json:"num_workers"`
	UseTPU             bool               `json:"use_tpu"`
	UseGPU             bool               `json:"use_gpu"`
	AcceleratorType    string             `json:"accelerator_type,omitempty"`
	Topology           string             `json:"topology,omitempty"`
	ResourcesPerWorker map[string]float64 `json:"resources_per_worker,omitempty"`
	PlacementStrategy  string             `json:"placement_strategy"`
	LabelSelector      map[string]string  `json:"label_selector,omitempty"`
}

func (s ScalingConfig) compile(p *field.Path) (LauncherScaling, *placement.SliceGroup, field.ErrorList) {
	var errs field.ErrorList
	strategy := s.PlacementStrategy
	if strategy == "" {
		strategy = placement.Pack
	}
	if !slices.Contains(placement.Strategies(), string(strategy)) {
		errs = append(errs, field.NotSupported(p.Child("placementStrategy"), string(s.PlacementStrategy), placement.Strategies()))
		strategy = placement.Pack // reported once, here
	}
	if s.NumWorkers < 0 {
		errs = append(errs, field.Invalid(p.Child("numWorkers"), s.NumWorkers, "cannot be negative"))
	}
	if s.NumSlices < 0 {
		errs = append(errs, field.Invalid(p.Child("numSlices"), s.NumSlices, "cannot be negative"))
	}
	for _, k := range slices.Sorted(maps.Keys(s.ResourcesPerWorker)) {
		if v := s.ResourcesPerWorker[k]; v < 0 {
			errs = append(errs, field.Invalid(p.Child("resourcesPerWorker").Key(k), v, "cannot be negative"))
		}
	}
	tpuReq, hasTPU := s.ResourcesPerWorker[rayvocab.ResourceTPU]
	if s.UseTPU && s.UseGPU {
		errs = append(errs, field.Forbidden(p.Child("useGPU"), "useTPU and useGPU are exclusive"))
	}
	out := LauncherScaling{
		UseTPU: s.UseTPU, UseGPU: s.UseGPU, PlacementStrategy: string(strategy),
		LabelSelector: maps.Clone(s.LabelSelector), ResourcesPerWorker: maps.Clone(s.ResourcesPerWorker),
	}
	if !s.UseTPU {
		if hasTPU && tpuReq > 0 {
			errs = append(errs, field.Forbidden(p.Child("resourcesPerWorker").Key(rayvocab.ResourceTPU), "TPU needs useTPU: true"))
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"accelerator", s.Accelerator != ""}, {"topology", s.Topology != ""}, {"numSlices", s.NumSlices != 0}, {"chipsPerHost", s.ChipsPerHost != 0}} {
			if f.set {
				errs = append(errs, field.Forbidden(p.Child(f.name), "applies only with useTPU: true"))
			}
		}
		out.NumWorkers = max(s.NumWorkers, 1) // Ray's default: 1
		out.AcceleratorType = s.Accelerator
		return out, nil, errs
	}

	if hasTPU && tpuReq == 0 {
		errs = append(errs, field.Invalid(p.Child("resourcesPerWorker").Key(rayvocab.ResourceTPU), tpuReq,
			"useTPU is true: request a positive TPU, or leave TPU out for one worker per host"))
	}
	if len(s.ResourcesPerWorker) > 0 && !hasTPU {
		errs = append(errs, field.Required(p.Child("resourcesPerWorker").Key(rayvocab.ResourceTPU),
			"with useTPU, resourcesPerWorker must hold TPU (Ray counts 0 TPU and rejects the config); leave resourcesPerWorker empty for one worker per host"))
	}
	if hasTPU && s.ChipsPerHost != 0 {
		errs = append(errs, field.Forbidden(p.Child("chipsPerHost"), "set either chipsPerHost or resourcesPerWorker[TPU], not both"))
	}
	single := s.NumWorkers == 1 && s.NumSlices <= 1 && s.Topology == "" && s.Accelerator == ""
	if single {
		// One TPU worker needs neither topology nor accelerator (Ray's rule).
		out.NumWorkers = 1
		if !hasTPU {
			out.ResourcesPerWorker = map[string]float64{rayvocab.ResourceTPU: 1}
		}
		return out, nil, errs
	}
	if s.Topology == "" {
		errs = append(errs, field.Required(p.Child("topology"), "useTPU with more than one worker needs the slice topology, e.g. 4x4"))
	}
	if s.Accelerator == "" {
		errs = append(errs, field.Required(p.Child("accelerator"), "useTPU with more than one worker needs the TPU generation, e.g. v6e or TPU-V6E"))
	}
	if len(s.LabelSelector) > 0 {
		errs = append(errs, field.Forbidden(p.Child("labelSelector"), "Ray Train pins TPU workers to a slice itself; a label selector is not allowed with useTPU"))
	}
	if s.Topology == "" || s.Accelerator == "" {
		return out, nil, errs
	}

	// The worker bundle: Ray Train passes resources_per_worker (defaulted
	// by get_tpu_worker_resources) to SlicePlacementGroup as
	// resources_per_bundle, without chips_per_vm.
	perWorker := maps.Clone(s.ResourcesPerWorker)
	if s.ChipsPerHost > 0 {
		perWorker = map[string]float64{rayvocab.ResourceTPU: float64(s.ChipsPerHost)}
	}
	// Ray Train adds accelerator_type:<type>: 0.001 to every worker's
	// resources when an accelerator type is set (ScalingConfig's
	// _resources_per_worker_not_none), and reserves the slice with them.
	if g, ok := tpu.LookupGeneration(s.Accelerator); ok {
		if perWorker == nil {
			perWorker = map[string]float64{}
		}
		key := rayvocab.AcceleratorTypeResource(g.RayAcceleratorType())
		if _, set := perWorker[key]; !set {
			perWorker[key] = rayvocab.AcceleratorConstraintAmount
		}
	}
	one, err := placement.SliceSpec{
		Topology:           s.Topology,
		Accelerator:        s.Accelerator,
		ResourcesPerBundle: perWorker,
		Strategy:           strategy,
	}.Compile(p)
	if err != nil {
		for _, e := range field.Errors(err) {
			e.Field = renameScalingField(e.Field, p)
			errs = append(errs, e)
		}
		return out, nil, errs
	}
	if s.ChipsPerHost > 0 {
		if _, cerr := (tpu.SliceSpec{Generation: s.Accelerator, Topology: s.Topology, ChipsPerHost: s.ChipsPerHost}).
			Resolve(tpu.TargetRay, tpu.FieldsUnder(p)); cerr != nil {
			for _, e := range cerr {
				if strings.HasSuffix(e.Field, ".chipsPerHost") {
					errs = append(errs, e)
				}
			}
		}
	}
	perSlice := one.BundlesPerSlice
	numSlices := max(s.NumSlices, 1)
	switch {
	case s.NumWorkers > 0 && s.NumWorkers%perSlice != 0:
		errs = append(errs, field.Invalid(p.Child("numWorkers"), s.NumWorkers,
			fmt.Sprintf("must be a multiple of %d, the workers per %s %s slice", perSlice, one.Generation, one.Topology)))
	case s.NumWorkers > 0 && s.NumSlices > 0 && s.NumWorkers != s.NumSlices*perSlice:
		errs = append(errs, field.Invalid(p.Child("numWorkers"), s.NumWorkers,
			fmt.Sprintf("numSlices %d of %s %s needs %d workers; set one of the two", s.NumSlices, one.Generation, one.Topology, s.NumSlices*perSlice)))
	case s.NumWorkers > 0:
		numSlices = s.NumWorkers / perSlice
	}
	if len(errs) > 0 {
		return out, nil, errs
	}
	if numSlices > 1 {
		g, _ := tpu.LookupGeneration(s.Accelerator)
		if !g.Multislice {
			errs = append(errs, field.Invalid(p.Child("numSlices"), numSlices, g.Name+" does not support multislice; use one slice"))
			return out, nil, errs
		}
	}
	group, err := placement.SliceSpec{
		Topology:               s.Topology,
		Accelerator:            s.Accelerator,
		ResourcesPerBundle:     perWorker,
		NumSlices:              numSlices,
		Strategy:               strategy,
		HeadReservationTimeout: WorkerGroupStartTimeout,
	}.Compile(p)
	if err != nil {
		return out, nil, append(errs, field.Errors(err)...)
	}
	out.NumWorkers = perSlice * numSlices
	out.AcceleratorType = group.AcceleratorType
	out.Topology = group.Topology
	out.ResourcesPerWorker = maps.Clone(group.BundleResources)
	return out, group, errs
}

// renameScalingField maps placement's field names onto ScalingConfig's.
func renameScalingField(f string, p *field.Path) string {
	prefix := p.String() + "."
	rest, ok := strings.CutPrefix(f, prefix)
	if !ok {
		return f
	}
	switch {
	case strings.HasPrefix(rest, "resourcesPerBundle"):
		return prefix + "resourcesPerWorker" + strings.TrimPrefix(rest, "resourcesPerBundle")
	case rest == "strategy":
		return prefix + "placementStrategy"
	}
	return f
}
