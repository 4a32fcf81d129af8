package placement

import "github.com/raytpu/raytpu/tpu"

// Limits: the most of every count a user sets, and where each comes from.
// Every front end (placement, train, serve, data) and the CLI checks its
// counts against this one table, and a count above its limit is a
// field.TypeTooMany error at the field's path, raised before anything that
// grows with the count is allocated. A limit is a bound no real workload
// comes near, chosen so that a typo (99999999999 slices) is an error and
// not an out-of-memory crash of the program that compiles it.
//
//	Limit                  Value    Source
//	MaxTopologyDimension   65536    raytpu's topology parser: chip counts stay in 48 bits (tpu)
//	MaxChipsPerSlice       9216     TPU catalog: the largest slice, v7x at 144 4x4x4 cubes (tpu)
//	MaxHostsPerSlice       9216     TPU catalog: the largest slice on 1-chip hosts (tpu)
//	MaxTPUResourcePerChip  8        Ray: TPU_VALID_CHIP_OPTIONS, a bundle holds at most 8 TPU
//	MaxSlices              1024     Ray's scalability envelope: 1k+ placement groups at once (a slice
//	                                is a placement group with pg_per_slice, plus its head reservation)
//	MaxBundles             16384    Ray's scalability envelope: 3k+ nodes in a cluster; Google's largest
//	                                Multislice runs (tens of thousands of chips, ~12.7k 4-chip hosts)
//	MaxWorkers             16384    Ray Train: one worker per bundle (MaxBundles)
//	MaxReplicas            20000    Ray's scalability envelope: 20k+ actors; a Serve replica is an actor
//	MaxActors              20000    the same envelope for Ray Data's tasks and actors at once
//	                                (map_batches concurrency, actor pool sizes)
//	MaxSliceReplicas       1024     Kubernetes: an object is at most 1.5 MiB (etcd's max request size);
//	                                KubeRay renders one worker group (~1 KiB) per replica that owns a
//	                                slice into the RayService; also Ray's 1k+ placement groups
//	MaxNameLength          253      Kubernetes: the longest object name (a DNS-1123 subdomain)
//	MaxBatchSize           16777216 Ray Data: a batch is built in one block; 2^24 rows of 8 bytes fill
//	                                DataContext.target_max_block_size (128 MiB)
//	MaxRows                2^48     raytpu's batching model: rows × MaxWorkers stays exact in int64;
//	                                also a local shuffle buffer (rows)
//	MaxPrefetchBatches     65536    raytpu's batching model: prefetch × MaxBatchSize stays within MaxRows
//
// Ray's scalability envelope is release/benchmarks/README.md in the Ray
// repository: the sizes Ray's release tests run at.
const (
	MaxTopologyDimension  = tpu.MaxTopologyDimension
	MaxChipsPerSlice      = tpu.MaxChipsPerSlice
	MaxHostsPerSlice      = tpu.MaxHostsPerSlice
	MaxTPUResourcePerChip = 8
	MaxSlices             = 1024
	MaxBundles            = 16384
	MaxWorkers            = MaxBundles
	MaxReplicas           = 20000
	MaxSliceReplicas      = 1024
	MaxNameLength         = 253
	MaxBatchSize          = 1 << 24
	MaxRows               = 1 << 48
	MaxActors             = MaxReplicas
	MaxPrefetchBatches    = MaxRows / MaxBatchSize
)

// The sources of the limits, as errors name them.
const (
	SourceTPUResourcePerChip = "Ray's TPU_VALID_CHIP_OPTIONS: a bundle holds at most 8 TPU"
	SourceSlices             = "Ray's scalability envelope: 1k+ placement groups at once"
	SourceBundles            = "bundles in one slice group; Ray's scalability envelope: 3k+ nodes in a cluster"
	SourceWorkers            = "one worker per bundle; Ray's scalability envelope: 3k+ nodes in a cluster"
	SourceReplicas           = "Ray's scalability envelope: 20k+ actors, and a replica is an actor"
	SourceSliceReplicas      = "replicas that own a slice, over the application: KubeRay renders a worker group for each into one object, which Kubernetes caps at 1.5 MiB"
	SourceNameLength         = "characters: Kubernetes' longest object name"
	SourceBatchSize          = "rows: Ray Data builds a batch in one block, 128 MiB by default"
	SourceRows               = "rows: raytpu's batching model keeps rows × workers exact"
	SourceActors             = "Ray's scalability envelope: 20k+ tasks and actors at once"
	SourcePrefetchBatches    = "batches: raytpu's batching model keeps prefetched rows (batches × the largest batch) within its row limit"
)
