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
	"regexp"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
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
	// vars), Ray's runtime_env. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv
}

// LauncherConfig is what the launcher reads from the plan to build the
// real JaxTrainer. Field names follow Ray's keyword arguments.
type LauncherConfig struct {
	TrainLoopPerWorker string          `json:"train_loop_per_worker"`
	TrainLoopConfig    json.RawMessage `json:"train_loop_config,omitempty"`
	Scaling            LauncherScaling `json:"scaling_config"`
	Run                LauncherRun     `json:"run_config"`
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
	errs = append(errs, t.RuntimeEnv.Validate(root.Child("runtimeEnv"))...)
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
			Entrypoint:     LauncherEntrypoint,
			RuntimeEnv:     *t.RuntimeEnv.Clone(),
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
