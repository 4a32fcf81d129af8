package placement

import (
	"bytes"
	"encoding/json"

	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// APIVersion is the version of the Plan format.
const APIVersion = "raytpu.dev/v1alpha1"

// Kind names what a plan runs, and so which front end compiled it.
type Kind string

// The plan kinds.
const (
	// KindJaxTrainer is a Ray Train JaxTrainer run (package train).
	KindJaxTrainer Kind = "JaxTrainer"
	// KindApplication is a Ray Serve application (package serve).
	KindApplication Kind = "Application"
	// KindPipeline is a Ray Data pipeline that reads, transforms and
	// writes a dataset (package data).
	KindPipeline Kind = "Pipeline"
	// KindBatchInference is a Ray Data batch inference pipeline (package data).
	KindBatchInference Kind = "BatchInference"
	// KindSlicePlacementGroup reserves slices and runs nothing
	// (ray.util.tpu.slice_placement_group).
	KindSlicePlacementGroup Kind = "SlicePlacementGroup"
)

// Kinds lists every plan kind.
func Kinds() []Kind {
	return []Kind{KindJaxTrainer, KindApplication, KindPipeline, KindBatchInference, KindSlicePlacementGroup}
}

// RunsToCompletion reports whether a plan of kind k ends by itself (a
// training run, a pipeline) rather than serving until it is deleted.
func (k Kind) RunsToCompletion() bool {
	switch k {
	case KindJaxTrainer, KindPipeline, KindBatchInference:
		return true
	}
	return false
}

// Plan is the compiled, backend-neutral form of a workload: the slices it
// needs and what runs on them. Every front end (train, serve, data)
// compiles to a Plan, and every backend runs one. A compiled Plan belongs
// to its caller: it shares no map or slice with another plan, with the
// spec it was compiled from or with a later compile, so a platform may
// change it (add a label, a resource) without changing anything else.
type Plan struct {
	APIVersion string `json:"apiVersion"`
	Kind       Kind   `json:"kind"`
	// Name of the workload.
	Name string `json:"name"`
	// Slices are the slice placements, in the order the workload declares
	// them; each names the part of the workload it belongs to.
	Slices []*SliceGroup `json:"slices"`
	// Capacity is where the slices' TPUs come from on GKE (Spot VMs, a
	// specific reservation, flex-start); the zero value is on-demand.
	// Backends that do not provision capacity ignore it. Optional.
	Capacity Capacity `json:"capacity,omitzero"`
	// Job is what runs as a Ray job (train, data), if anything.
	Job *Job `json:"job,omitempty"`
	// Serve is the Ray Serve application a service plan deploys.
	Serve *ServeApplication `json:"serve,omitempty"`
}

// Job is a Ray job: an entrypoint with its runtime environment. The
// launcher, when set, is raytpu's Python program that turns LauncherConfig
// into the real Ray library call.
type Job struct {
	// Entrypoint is the shell command Ray runs on the head node. Empty
	// when Launcher is set: the backend runs its launcher.
	Entrypoint string                `json:"entrypoint,omitempty"`
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtimeEnv"`
	// Metadata is attached to the Ray job.
	Metadata map[string]string `json:"metadata,omitempty"`
	// EntrypointNumCPUs reserves CPU for the driver.
	EntrypointNumCPUs float64 `json:"entrypointNumCpus,omitempty"`
	// EntrypointResources reserves custom resources for the driver.
	EntrypointResources map[string]float64 `json:"entrypointResources,omitempty"`
	// Launcher names the launcher entry ("train"), if the job runs
	// raytpu's launcher; each backend ships the launcher its own way.
	Launcher string `json:"launcher,omitempty"`
	// LauncherConfig is the front end's configuration, read by the launcher.
	LauncherConfig json.RawMessage `json:"launcherConfig,omitempty"`
	// Storage is where the job persists its results and checkpoints, for
	// a backend to check that every host of the job reaches it. Nil: the
	// job names none.
	Storage *Storage `json:"storage,omitempty"`
}

// Storage is a job's persistent storage (Ray Train's
// RunConfig.storage_path).
type Storage struct {
	// Path is a URI (gs://bucket/prefix, s3://...) or a local directory.
	Path string `json:"path"`
	// Field is the path of the spec field that set Path, for errors
	// (trainer.run_config.storage_path).
	Field string `json:"field"`
	// SharedMount says the user declared the local directory Path mounted
	// on every host at that path (NFS, Filestore, Cloud Storage FUSE), so
	// that hosts which share no disk still share it.
	SharedMount bool `json:"sharedMount,omitempty"`
}

// ServeApplication is a Ray Serve application as Ray's Serve REST API
// takes it.
type ServeApplication struct {
	// Config is one entry of "applications" in the body of Serve's
	// PUT /api/serve/applications/: typed, for a backend to read, and
	// marshalled (serveconfig.Application.MarshalJSON) to the bytes Ray
	// is sent.
	Config serveconfig.Application `json:"config"`
}

// MarshalIndent renders p as indented JSON with a trailing newline. The
// output is byte-identical for equal plans: struct fields keep their
// declared order and map keys are sorted.
func (p *Plan) MarshalIndent() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// NewSlicePlan wraps compiled slice groups in a Plan of kind
// SlicePlacementGroup. A group without a part is tagged as the i-th
// placement group of the plan.
func NewSlicePlan(name string, groups ...*SliceGroup) *Plan {
	for i, g := range groups {
		if g.Part == (Part{}) {
			g.Part = Part{Role: RolePlacementGroup, Name: name, Index: i}
		}
	}
	return &Plan{APIVersion: APIVersion, Kind: KindSlicePlacementGroup, Name: name, Slices: groups}
}
