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

// WorkerGroupStartTimeout is Ray Train's default worker group start
// timeout (RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S), which it also passes to
// SlicePlacementGroup as the head reservation timeout.
const WorkerGroupStartTimeout = 60 * time.Second

// Launcher is the launcher entry a compiled trainer's job runs: the
// backend ships raytpu's launcher, which builds the real JaxTrainer from
// the plan's LauncherConfig and calls fit().
const Launcher = "train"

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
	root := trainerPath
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

	scaling, group, serrs := t.ScalingConfig.compile(scalingPath, scalingSlice)
	errs = append(errs, serrs...)
	run, rerrs := t.RunConfig.compile(runPath)
	errs = append(errs, rerrs...)
	errs = append(errs, t.RuntimeEnv.Validate(runtimeEnvPath)...)
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
		Kind:       placement.KindJaxTrainer,
		Name:       t.RunConfig.Name,
		Job: &placement.Job{
			RuntimeEnv:     *t.RuntimeEnv.Clone(),
			Metadata:       map[string]string{"raytpu.kind": string(placement.KindJaxTrainer), "raytpu.name": t.RunConfig.Name},
			Launcher:       Launcher,
			LauncherConfig: raw,
		},
	}
	plan.Slices = []*placement.SliceGroup{}
	if group != nil {
		group.Part = placement.Part{Role: placement.RoleWorkerGroup, Name: t.RunConfig.Name}
		plan.Slices = append(plan.Slices, group)
	}
	return plan, nil
}
