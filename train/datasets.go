package train

import (
	"encoding/json"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
)

// DatasetSource is the data side of a JaxTrainer: the datasets its workers
// iterate (JaxTrainer(datasets=..., dataset_config=ray.train.DataConfig(...)))
// and the iter_jax_batches options of each. data.DatasetConfig satisfies it;
// train declares the interface so that it need not import data.
//
// CompileForTrainer is called while the trainer compiles, with the path
// of the trainer ("trainer"; a source puts its datasets below it at
// datasets, as JaxTrainer's datasets= keyword, and its DataConfig at
// dataset_config), the resolved worker count, the workers' TPU generation
// ("" for CPU workers, and for a single TPU worker without an accelerator)
// and the TPU chips of each worker (0 without a generation). It returns the
// JSON object the launcher reads (keys "datasets", "dataset_config",
// "iter_jax_batches"), warnings to show before launch, and errors at paths
// below p (including a batch policy certain to fail).
type DatasetSource interface {
	CompileForTrainer(p *field.Path, workers int, accelerator string, chipsPerHost int) (json.RawMessage, placement.Diagnosis, field.ErrorList)
}

// datasetsPath is where a trainer's dataset errors point when the source
// returns something other than a JSON object.
var datasetsPath = trainerPath.Child("datasets")

// compileDatasets runs the source's hook for the compiled scaling. It is
// called only when the scaling config is valid, so the worker count is
// known.
func compileDatasets(src DatasetSource, s ScalingConfig, scaling rayruntime.TrainScaling, group *placement.SliceGroup) (json.RawMessage, placement.Diagnosis, field.ErrorList) {
	accelerator, chips := "", 0
	if s.UseTPU && group != nil {
		accelerator = s.Accelerator
		chips = int(scaling.ResourcesPerWorker[rayvocab.ResourceTPU])
	}
	raw, warn, errs := src.CompileForTrainer(trainerPath, scaling.NumWorkers, accelerator, chips)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	if len(raw) > 0 && raw[0] != '{' {
		return nil, nil, field.ErrorList{field.Invalid(datasetsPath, string(raw), "the dataset source must compile to a JSON object")}
	}
	return raw, warn, nil
}
