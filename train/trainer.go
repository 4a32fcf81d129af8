package train

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
)

// WorkerGroupStartTimeout is Ray Train's default worker group start
// timeout (RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S), which it also passes to
// SlicePlacementGroup as the head reservation timeout.
const WorkerGroupStartTimeout = 60 * time.Second

// JaxTrainer mirrors ray.train.v2.jax.JaxTrainer.
type JaxTrainer struct {
	// TrainLoopPerWorker is the Python train function as "module:function"
	// (or "package.module:function"), importable from the working
	// directory. Required. It takes no argument, or one dict: the
	// TrainLoopConfig.
	TrainLoopPerWorker string `json:"train_loop_per_worker"`
	// TrainLoopConfig is passed to the train function as a dict; it must
	// marshal to a JSON object. Optional. Default: none.
	TrainLoopConfig any `json:"train_loop_config,omitempty"`
	// ScalingConfig says how many workers run and where.
	ScalingConfig ScalingConfig `json:"scaling_config"`
	// RunConfig names the run and sets storage, checkpointing and failure
	// handling.
	RunConfig RunConfig `json:"run_config"`
	// RuntimeEnv is the job's runtime environment (working dir, pip, env
	// vars), Ray's runtime_env. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
	// Datasets are the datasets the workers iterate and Ray Train's
	// DataConfig (JaxTrainer's datasets= and dataset_config=), usually a
	// data.DatasetConfig. Optional. Default: none.
	//
	// The launcher passes the built datasets to the real JaxTrainer and
	// adds each dataset's iter_jax_batches keyword arguments to the train
	// loop's config under rayruntime.IterJaxBatchesKey (a dict by dataset
	// name); the loop iterates its shard with
	// raytpu_iter_jax_batches(config, name) from the launcher module (see
	// [DatasetSource] and package rayruntime). A TrainLoopConfig must then
	// be a JSON object or unset.
	Datasets DatasetSource `json:"datasets,omitempty"`
	// JaxConfig configures the JAX backend (Ray's jax_config). Optional.
	// Default: nil, Ray's JaxConfig(use_tpu=ScalingConfig.UseTPU,
	// use_gpu=ScalingConfig.UseGPU).
	JaxConfig *JaxConfig `json:"jax_config,omitempty"`
}

var importPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$`)

// Compile validates t and returns its plan. Problems come back together as
// a field.ErrorList with paths under "trainer" (trainer.scaling_config.topology,
// trainer.datasets[train].iter.batchSize). Compile drops the
// Datasets' warnings; CompileWithWarnings returns them.
func (t JaxTrainer) Compile() (*placement.Plan, error) {
	p, _, err := t.CompileWithWarnings()
	return p, err
}

// CompileWithWarnings is Compile that also returns its warnings: things
// that will run but probably not as meant. They come from the train loop's
// module (a module-level JAX import) and from the Datasets (rows Ray
// Train's split drops silently, a Drop that discards many rows). The
// Datasets are compiled only when the scaling config is valid, since
// their prediction needs the worker count. With errors, the warnings
// found so far come back too.
//
// With a local working directory, Compile reads the train loop's module
// before anything is uploaded: a missing module or a function it does not
// define is an error at trainer.train_loop_per_worker (the package doc,
// "Checks before launch", says what the scan sees and its limits). A topology given as a chip count ("16") is an
// error that lists the shapes with that many chips.
func (t JaxTrainer) CompileWithWarnings() (*placement.Plan, placement.Diagnosis, error) {
	root := trainerPath
	var errs field.ErrorList
	var warnings placement.Diagnosis

	if t.TrainLoopPerWorker == "" {
		errs = append(errs, field.Required(root.Child("train_loop_per_worker"), `a Python import path "module:function"`))
	} else if !importPath.MatchString(t.TrainLoopPerWorker) {
		errs = append(errs, field.Invalid(root.Child("train_loop_per_worker"), t.TrainLoopPerWorker, `want a Python import path "module:function", e.g. "train_loop:train_func"`))
	} else {
		w, lerrs := checkTrainLoop(t.TrainLoopPerWorker, t.RuntimeEnv)
		warnings = append(warnings, w...)
		errs = append(errs, lerrs...)
	}
	var loopConfig json.RawMessage
	if t.TrainLoopConfig != nil {
		b, err := json.Marshal(t.TrainLoopConfig)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(root.Child("train_loop_config"), fmt.Sprintf("%T", t.TrainLoopConfig), "must marshal to JSON: "+err.Error()))
		case len(b) == 0 || b[0] != '{':
			errs = append(errs, field.Invalid(root.Child("train_loop_config"), string(b), "must be a JSON object (a Python dict)"))
		default:
			loopConfig = b
		}
	}

	startTimeout := t.RunConfig.WorkerGroupStartTimeout
	if startTimeout <= 0 {
		startTimeout = WorkerGroupStartTimeout
	}
	scaling, group, serrs := t.ScalingConfig.compile(scalingPath, scalingSlice, startTimeout)
	errs = append(errs, serrs...)
	run, rerrs := t.RunConfig.compile(runPath)
	errs = append(errs, rerrs...)
	if e := checkProfilerPort(runPath.Child("profiler"), t.RunConfig, t.ScalingConfig); e != nil {
		errs = append(errs, e)
	}
	errs = append(errs, t.RuntimeEnv.Validate(runtimeEnvPath)...)
	jax, jerrs := t.JaxConfig.compile(t.ScalingConfig)
	errs = append(errs, jerrs...)
	if _, set := t.RuntimeEnv.EnvVars[startTimeoutEnv]; set && t.RunConfig.WorkerGroupStartTimeout != 0 {
		errs = append(errs, field.Forbidden(runtimeEnvPath.Child("envVars").Key(startTimeoutEnv), "trainer.run_config.worker_group_start_timeout sets it; set one of the two"))
	}
	var datasets json.RawMessage
	if t.Datasets != nil && len(serrs) == 0 {
		dsets, dwarn, derrs := compileDatasets(t.Datasets, t.ScalingConfig, scaling, group)
		datasets = dsets
		warnings = append(warnings, dwarn...)
		errs = append(errs, derrs...)
	}
	if len(errs) > 0 {
		return nil, warnings, errs // the warnings found so far help too
	}

	cfg := rayruntime.TrainConfig{TrainLoopPerWorker: t.TrainLoopPerWorker, TrainLoopConfig: loopConfig, Scaling: scaling, Run: run, Datasets: datasets, Jax: jax}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("train: encoding launcher config: %w", err)
	}
	plan := &placement.Plan{
		APIVersion: placement.APIVersion,
		Kind:       placement.KindJaxTrainer,
		Name:       t.RunConfig.Name,
		Job: &placement.Job{
			RuntimeEnv:     t.jobRuntimeEnv(),
			Metadata:       map[string]string{"raytpu.kind": string(placement.KindJaxTrainer), "raytpu.name": t.RunConfig.Name},
			Launcher:       rayruntime.EntryTrain,
			LauncherConfig: raw,
			Storage:        t.RunConfig.storage(),
		},
	}
	plan.Slices = []*placement.SliceGroup{}
	if group != nil {
		group.Part = placement.Part{Role: placement.RoleWorkerGroup, Name: t.RunConfig.Name}
		plan.Slices = append(plan.Slices, group)
	}
	return plan, warnings, nil
}

// jobRuntimeEnv is the job's runtime_env: RuntimeEnv, plus the worker
// group start timeout, which Ray Train reads from the environment of its
// controller.
func (t JaxTrainer) jobRuntimeEnv() runtimeenv.RuntimeEnv {
	env := *t.RuntimeEnv.Clone()
	if t.RunConfig.WorkerGroupStartTimeout > 0 {
		if env.EnvVars == nil {
			env.EnvVars = map[string]string{}
		}
		env.EnvVars[startTimeoutEnv] = startTimeoutValue(t.RunConfig.WorkerGroupStartTimeout)
	}
	return env
}
