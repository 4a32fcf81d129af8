// Package data mirrors Ray Data for TPUs: dataset pipelines that read,
// transform and write (ray.data.read_parquet, Dataset.map_batches,
// Dataset.write_parquet), batch inference on TPU actors, and the input
// side of a JaxTrainer (DataIterator.iter_jax_batches).
//
// A [Dataset] is built by chaining immutable steps: each call returns a new
// Dataset and never shares a map or slice with its parent. A [Pipeline]
// (a dataset with a sink) compiles to a placement.Plan of kind Pipeline or
// BatchInference whose job runs raytpu's launcher entry "data"; the
// launcher configuration is the pipeline as JSON with Ray's keyword names.
// [Pipeline.Run] compiles and runs it on a backend (the simulator, a Ray
// cluster, KubeRay), as executing a Ray Dataset to its write does. An actor
// pool's dead actor is restarted and its calls retried unless
// MapBatches.MaxRestarts says otherwise, so a run writes every row once
// or fails with a [RunError].
//
// [IterJaxBatches] mirrors iter_jax_batches option for option, with the
// ragged-final-batch behaviour as one typed choice ([Drop], [Pad],
// [Raise]). [Predict] runs an arithmetic model of Ray's sharding (Ray
// Train's streaming_split(equal=True)), batching and cross-host batch
// synchronisation, and says before launch how many batches every host gets,
// what happens to its last one, and how many rows Ray drops silently. The
// row count is known for Range, FromItems and ReadParquet over local files,
// whose footers [ParquetRows] reads (github.com/parquet-go/parquet-go).
// [CompileTrainerDatasets] is the entry point a JaxTrainer front end calls.
//
// Ray Data has no slice or multi-host notion: a map_batches task or actor
// runs on one host. A step that asks for more TPU chips than one host of its
// generation holds is a compile error; such a model belongs in Serve or
// Train with a topology.
//
// data imports field, tpu, placement, runtimeenv, rayvocab and the backend
// contract (backend); it never imports another front end (train, serve) or
// a backend.
package data
