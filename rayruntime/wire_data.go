package rayruntime

import "encoding/json"

// Op is one Ray Data call as the launcher makes it: Op is the function or
// method name (read_parquet, map_batches, write_parquet) and Kwargs its
// keyword arguments, named as Ray names them. A keyword argument named in
// [CallableKwargs] whose value is "module:attr" is imported first; a
// "compute" object becomes ray.data.ActorPoolStrategy(**compute).
type Op struct {
	Op     string          `json:"op"`
	Kwargs json.RawMessage `json:"kwargs"`
}

// Dataset is a Ray Dataset as the launcher builds it: the source op
// (ray.data.<op>), then each step (ds.<op>) in order, then the sink of a
// pipeline (absent for a trainer's dataset).
type Dataset struct {
	Source Op   `json:"source"`
	Steps  []Op `json:"steps"`
	Sink   *Op  `json:"sink,omitempty"`
}

// PipelineConfig is the launcherConfig of a plan whose job runs the
// [EntryData] entry: a named dataset that ends in a sink. Package data
// compiles a data.Pipeline into it.
type PipelineConfig struct {
	Name string `json:"name"`
	Dataset
}

// TrainDatasets is [TrainConfig].Datasets: the launcher builds the
// JaxTrainer's datasets= and dataset_config= from it and adds
// IterJaxBatches to the train loop's config under [IterJaxBatchesKey].
// Package data compiles a data.DatasetConfig into it.
type TrainDatasets struct {
	Datasets       map[string]Dataset              `json:"datasets"`
	DataConfig     DataConfig                      `json:"dataset_config"`
	IterJaxBatches map[string]IterJaxBatchesKwargs `json:"iter_jax_batches"`
}

// DataConfig holds ray.train.DataConfig's keyword arguments.
// DatasetsToSplit is "all" or a list of dataset names.
type DataConfig struct {
	DatasetsToSplit any `json:"datasets_to_split"`
}

// IterJaxBatchesKwargs are the keyword arguments of a dataset shard's
// iter_jax_batches, as a train loop passes them (raytpu_iter_jax_batches).
type IterJaxBatchesKwargs struct {
	BatchSize              int  `json:"batch_size"`
	DropLast               bool `json:"drop_last"`
	Paddings               any  `json:"paddings"`
	DTypes                 any  `json:"dtypes"`
	PrefetchBatches        int  `json:"prefetch_batches"`
	LocalShuffleBufferSize *int `json:"local_shuffle_buffer_size"`
	LocalShuffleSeed       *int `json:"local_shuffle_seed"`
	SynchronizeBatches     bool `json:"synchronize_batches"`
}
