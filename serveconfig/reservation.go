package serveconfig

// SliceReservationKey is the key of a deployment's user_config under which
// a deployment whose replicas own a TPU slice carries its
// [SliceReservation]. It is part of raytpu's contract with its replica
// runtime and stays stable.
const SliceReservationKey = "raytpu_slice"

// SliceReservationVersion is the version of the [SliceReservation] format.
const SliceReservationVersion = 1

// ProfilerKey is the key of a slice deployment's user_config under which
// raytpu's replica runtime finds its [ProfilerConfig]. It is reserved.
const ProfilerKey = "raytpu_profiler"

// SliceReservation is what a replica runtime needs to reserve its slice
// when it starts: the arguments of ray.util.tpu.slice_placement_group
// (topology, accelerator_version, resources_per_bundle, strategy) and the
// shape of the slice. Field names are slice_placement_group's.
type SliceReservation struct {
	Version            int                `json:"version"`
	Topology           string             `json:"topology"`
	AcceleratorVersion string             `json:"accelerator_version"`
	AcceleratorType    string             `json:"accelerator_type"`
	PodType            string             `json:"pod_type"`
	NumHosts           int                `json:"num_hosts"`
	ChipsPerHost       int                `json:"chips_per_host"`
	NumBundles         int                `json:"num_bundles"`
	ResourcesPerBundle map[string]float64 `json:"resources_per_bundle"`
	// Strategy is the slice's placement strategy (PACK, SPREAD,
	// STRICT_PACK, STRICT_SPREAD).
	Strategy string `json:"strategy"`
	// HeadReservationTimeoutS bounds the wait for the slice head (Ray's
	// default, 100).
	HeadReservationTimeoutS float64 `json:"head_reservation_timeout_s"`
}

// ProfilerConfig starts the JAX profiler server (jax.profiler.start_server)
// on every TPU host of every replica of a deployment whose replicas own a
// slice (AcceleratorConfig with a Topology; raytpu's replica runtime,
// tpu_slice, starts it after jax.distributed.initialize and before the
// user's class is built). The replica prints where each host's server
// listens as a line
//
//	RAYTPU_PROFILER {"app": "...", "deployment": "...", "replica": "...", "host": 0, "node_id": "...", "ip": "...", "port": 9012, "pid": 4242}
//
// on its standard output, which the dashboard serves by actor id (GET
// /api/v0/logs/file?actor_id=<replica actor>&suffix=out); raytpu profile
// --app --deployment --replica --host reads it there and captures a trace.
type ProfilerConfig struct {
	// Port is where every host's server listens, on the host's node.
	// Optional. Default: 0, a free port picked by each host worker.
	Port int `json:"port,omitempty"`
}
