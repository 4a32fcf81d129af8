package placement

import (
	"bytes"
	"encoding/json"

	"github.com/raytpu/raytpu/runtimeenv"
)

// APIVersion is the version of the Plan format.
const APIVersion = "raytpu.dev/v1alpha1"

// Plan is the compiled, backend-neutral form of a workload: the slices it
// needs and what runs on them. Every front end (train, serve, data)
// compiles to a Plan, and every backend runs one.
type Plan struct {
	APIVersion string `json:"apiVersion"`
	// Kind names the front end: JaxTrainer, Deployment, BatchInference, SlicePlacementGroup.
	Kind string `json:"kind"`
	// Name of the workload.
	Name string `json:"name"`
	// Slices are the slice placements, in the order the workload declares them.
	Slices []*SliceGroup `json:"slices"`
	// Job is what runs as a Ray job, if anything.
	Job *Job `json:"job,omitempty"`
}

// Job is a Ray job: an entrypoint with its runtime environment. The
// launcher, when set, is raytpu's Python program that turns LauncherConfig
// into the real Ray library call.
type Job struct {
	// Entrypoint is the shell command Ray runs on the head node.
	Entrypoint string                `json:"entrypoint"`
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtimeEnv"`
	// Metadata is attached to the Ray job.
	Metadata map[string]string `json:"metadata,omitempty"`
	// EntrypointNumCPUs reserves CPU for the driver.
	EntrypointNumCPUs float64 `json:"entrypointNumCpus,omitempty"`
	// EntrypointResources reserves custom resources for the driver.
	EntrypointResources map[string]float64 `json:"entrypointResources,omitempty"`
	// Launcher names the embedded launcher entry ("train"), if the job runs one.
	Launcher string `json:"launcher,omitempty"`
	// LauncherConfig is the front end's configuration, read by the launcher.
	LauncherConfig json.RawMessage `json:"launcherConfig,omitempty"`
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

// NewSlicePlan wraps compiled slice groups in a Plan of kind SlicePlacementGroup.
func NewSlicePlan(name string, groups ...*SliceGroup) *Plan {
	return &Plan{APIVersion: APIVersion, Kind: "SlicePlacementGroup", Name: name, Slices: groups}
}
