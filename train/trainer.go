// Package train mirrors Ray Train's JaxTrainer (ray.train.v2.jax) for TPUs.
//
// A [JaxTrainer] names a Python train loop by import path and says how to
// scale it: UseTPU with an accelerator and a topology gives one worker per
// TPU host, and NumSlices (or NumWorkers) scales out over several slices.
// [JaxTrainer.Compile] checks every rule Ray's ScalingConfig enforces and the
// TPU catalog's, reports every problem at once with its field path, and
// yields a [placement.Plan]: the slice placement Ray Train will make and the
// job that runs raytpu's launcher, which builds the real JaxTrainer inside
// Ray and calls fit().
//
// The package never talks to a cluster; a backend (the ray package, or the
// simulator) runs the plan.
package train

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Kind is the plan kind a JaxTrainer compiles to.
const Kind = "JaxTrainer"

// WorkerGroupStartTimeout is Ray Train's default worker group start
// timeout (RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S), which it also passes to
// SlicePlacementGroup as the head reservation timeout.
const WorkerGroupStartTimeout = 60 * time.Second

// LauncherEntrypoint is the job entrypoint of a compiled trainer: the
// launcher script the backend ships at the root of the working directory.
const LauncherEntrypoint = "python _raytpu_launcher.py"

// JaxTrainer mirrors ray.train.v2.jax.JaxTrainer.
type JaxTrainer struct {
	// TrainLoopPerWorker is the Python train function as "module:function"
	// (or "package.module:function"), importable from the working
	// directory. Required. It takes no argument, or one dict: the
	// TrainLoopConfig.
	TrainLoopPerWorker string
	// TrainLoopConfig is passed to the train function as a dict; it must
	// marshal to a JSON object. Optional. Default: none.
	TrainLoopConfig any
	// ScalingConfig says how many workers run and where.
	ScalingConfig ScalingConfig
	// RunConfig names the run and sets storage, checkpointing and failure
	// handling.
	RunConfig RunConfig
	// RuntimeEnv is the job's runtime environment (working dir, pip, env
	// vars). Optional.
	RuntimeEnv RuntimeEnv
}

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

// RunConfig mirrors ray.train.RunConfig.
type RunConfig struct {
	// Name of the run; with StoragePath it locates checkpoints. Required:
	// runs that share a name and storage path resume one another.
	Name string
	// StoragePath is where results and checkpoints are persisted; shared
	// storage for multi-node runs. Optional. Default: ~/ray_results.
	StoragePath string
	// Checkpoint configures checkpoint retention.
	Checkpoint CheckpointConfig
	// Failure configures restarts.
	Failure FailureConfig
	// WorkerEnv are environment variables for every train worker (Ray's
	// worker_runtime_env env_vars), e.g. JAX_PLATFORMS=cpu. Optional.
	WorkerEnv map[string]string
}

// CheckpointConfig mirrors ray.train.CheckpointConfig.
type CheckpointConfig struct {
	// NumToKeep is how many checkpoints to keep. Optional. Default: 0 = all.
	NumToKeep int
	// ScoreAttribute is the reported metric that ranks checkpoints.
	// Optional. Default: "" (keep the most recent).
	ScoreAttribute string
	// ScoreOrder is "max" or "min". Optional. Default: "max".
	ScoreOrder string
}

// FailureConfig mirrors ray.train.FailureConfig.
type FailureConfig struct {
	// MaxFailures is how many worker-group failures to recover from by
	// restarting from the latest checkpoint; -1 retries forever.
	// Optional. Default: 0 (fail on the first failure).
	MaxFailures int
}

// RuntimeEnv is the job's runtime environment.
type RuntimeEnv struct {
	// WorkingDir is a local directory shipped to the cluster; the train
	// loop's module is imported from it. Optional.
	WorkingDir string
	// Excludes are gitignore-style patterns left out of WorkingDir.
	Excludes []string
	// Pip lists pip requirements installed for the job. Optional.
	Pip []string
	// EnvVars are set for the driver and every worker. Optional.
	EnvVars map[string]string
}

// LauncherConfig is what the launcher reads from the plan to build the
// real JaxTrainer. Field names follow Ray's keyword arguments.
type LauncherConfig struct {
	TrainLoopPerWorker string          `json:"train_loop_per_worker"`
	TrainLoopConfig    json.RawMessage `json:"train_loop_config,omitempty"`
	Scaling            LauncherScaling `json:"scaling_config"`
	Run                LauncherRun     `json:"run_config"`
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

// LauncherRun holds RunConfig's keyword arguments.
type LauncherRun struct {
	Name                     string            `json:"name"`
	StoragePath              string            `json:"storage_path,omitempty"`
	MaxFailures              int               `json:"max_failures"`
	NumToKeep                int               `json:"num_to_keep,omitempty"`
	CheckpointScoreAttribute string            `json:"checkpoint_score_attribute,omitempty"`
	CheckpointScoreOrder     string            `json:"checkpoint_score_order"`
	WorkerEnvVars            map[string]string `json:"worker_env_vars,omitempty"`
}

var importPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$`)

// Compile validates t and returns its plan. Problems come back together as
// a field.ErrorList with paths under "trainer" (trainer.scaling.topology).
func (t JaxTrainer) Compile() (*placement.Plan, error) {
	root := field.NewPath("trainer")
	var errs field.ErrorList

	if t.TrainLoopPerWorker == "" {
		errs = append(errs, field.Required(root.Child("trainLoopPerWorker"), `a Python import path "module:function"`))
	} else if !importPath.MatchString(t.TrainLoopPerWorker) {
		errs = append(errs, field.Invalid(root.Child("trainLoopPerWorker"), t.TrainLoopPerWorker, `want a Python import path "module:function", e.g. "train_loop:train_func"`))
	}
	var loopConfig json.RawMessage
	if t.TrainLoopConfig != nil {
		b, err := json.Marshal(t.TrainLoopConfig)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(root.Child("trainLoopConfig"), fmt.Sprintf("%T", t.TrainLoopConfig), "must marshal to JSON: "+err.Error()))
		case len(b) == 0 || b[0] != '{':
			errs = append(errs, field.Invalid(root.Child("trainLoopConfig"), string(b), "must be a JSON object (a Python dict)"))
		default:
			loopConfig = b
		}
	}

	scaling, group, serrs := t.ScalingConfig.compile(root.Child("scaling"))
	errs = append(errs, serrs...)
	run, rerrs := t.RunConfig.compile(root.Child("run"))
	errs = append(errs, rerrs...)
	errs = append(errs, t.RuntimeEnv.validate(root.Child("runtimeEnv"))...)
	if len(errs) > 0 {
		return nil, errs
	}

	cfg := LauncherConfig{TrainLoopPerWorker: t.TrainLoopPerWorker, TrainLoopConfig: loopConfig, Scaling: scaling, Run: run}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("train: encoding launcher config: %w", err)
	}
	plan := &placement.Plan{
		APIVersion: placement.APIVersion,
		Kind:       Kind,
		Name:       t.RunConfig.Name,
		Job: &placement.Job{
			Entrypoint: LauncherEntrypoint,
			RuntimeEnv: placement.RuntimeEnv{
				WorkingDir: t.RuntimeEnv.WorkingDir,
				Excludes:   slices.Clone(t.RuntimeEnv.Excludes),
				Pip:        slices.Clone(t.RuntimeEnv.Pip),
				EnvVars:    maps.Clone(t.RuntimeEnv.EnvVars),
			},
			Metadata:       map[string]string{"raytpu.kind": Kind, "raytpu.name": t.RunConfig.Name},
			Launcher:       "train",
			LauncherConfig: raw,
		},
	}
	plan.Slices = []*placement.SliceGroup{}
	if group != nil {
		plan.Slices = append(plan.Slices, group)
	}
	return plan, nil
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

func (r RunConfig) compile(p *field.Path) (LauncherRun, field.ErrorList) {
	var errs field.ErrorList
	if strings.TrimSpace(r.Name) == "" {
		errs = append(errs, field.Required(p.Child("name"), "a run name; runs that share a name and storage path resume one another"))
	} else if strings.ContainsAny(r.Name, "/\\") {
		errs = append(errs, field.Invalid(p.Child("name"), r.Name, "must not contain a path separator"))
	}
	if r.Checkpoint.NumToKeep < 0 {
		errs = append(errs, field.Invalid(p.Child("checkpoint", "numToKeep"), r.Checkpoint.NumToKeep, "must be at least 1, or 0 to keep every checkpoint"))
	}
	order := r.Checkpoint.ScoreOrder
	if order == "" {
		order = "max"
	}
	if order != "max" && order != "min" {
		errs = append(errs, field.NotSupported(p.Child("checkpoint", "scoreOrder"), r.Checkpoint.ScoreOrder, []string{"max", "min"}))
	}
	if r.Failure.MaxFailures < -1 {
		errs = append(errs, field.Invalid(p.Child("failure", "maxFailures"), r.Failure.MaxFailures, "must be -1 (retry forever), 0, or a positive count"))
	}
	return LauncherRun{
		Name:                     r.Name,
		StoragePath:              r.StoragePath,
		MaxFailures:              r.Failure.MaxFailures,
		NumToKeep:                r.Checkpoint.NumToKeep,
		CheckpointScoreAttribute: r.Checkpoint.ScoreAttribute,
		CheckpointScoreOrder:     order,
		WorkerEnvVars:            maps.Clone(r.WorkerEnv),
	}, errs
}

func (e RuntimeEnv) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(e.EnvVars)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			errs = append(errs, field.Invalid(p.Child("envVars").Key(k), k, "not a valid environment variable name"))
		}
	}
	return errs
}
