package data

import (
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/runtimeenv"
)

// Pipeline is a Ray Data job: a dataset that ends in a write.
//
// It compiles to a plan of kind BatchInference when a map_batches step
// runs on accelerators (Resources holds TPU or GPU, or Accelerator is
// set), else of kind Pipeline. The plan reserves no slice: Ray Data places
// each task and actor by its resources, one host at a time.
type Pipeline struct {
	// Name of the job. Required.
	Name string
	// Dataset is the pipeline; it must end in a sink (Dataset.Write).
	Dataset Dataset
	// RuntimeEnv is the job's runtime environment (working dir holding the
	// Python modules that map_batches names, pip, env vars). Optional.
	RuntimeEnv runtimeenv.RuntimeEnv
}

var (
	pipelinePath   = field.NewPath("pipeline")
	pipelineDSPath = pipelinePath.Child("dataset")
)

// Compile validates p and returns its plan. Problems come back together as
// a field.ErrorList with paths under "pipeline" (pipeline.dataset.steps[0].resources[TPU]).
func (p Pipeline) Compile() (*placement.Plan, error) {
	var errs field.ErrorList
	if strings.TrimSpace(p.Name) == "" {
		errs = append(errs, field.Required(pipelinePath.Child("name"), "a job name"))
	}
	ds, derrs := p.Dataset.compile(pipelineDSPath)
	errs = append(errs, derrs...)
	if p.Dataset.sink == nil {
		errs = append(errs, field.Required(pipelineDSPath.Child("sink"), "a write (Dataset.Write(WriteParquet{...}) or WriteJSON); a pipeline without one computes nothing that is kept"))
	}
	errs = append(errs, p.RuntimeEnv.Validate(pipelinePath.Child("runtimeEnv"))...)
	if len(errs) > 0 {
		return nil, errs
	}
	raw, err := marshal(rayruntime.PipelineConfig{Name: p.Name, Dataset: ds.Dataset})
	if err != nil {
		return nil, fmt.Errorf("data: encoding launcher config: %w", err)
	}
	kind := placement.KindPipeline
	if p.Dataset.onAccelerators() {
		kind = placement.KindBatchInference
	}
	return &placement.Plan{
		APIVersion: placement.APIVersion,
		Kind:       kind,
		Name:       p.Name,
		Slices:     []*placement.SliceGroup{},
		Job: &placement.Job{
			RuntimeEnv:     *p.RuntimeEnv.Clone(),
			Metadata:       map[string]string{"raytpu.kind": string(kind), "raytpu.name": p.Name},
			Launcher:       rayruntime.EntryData,
			LauncherConfig: raw,
		},
	}, nil
}

// onAccelerators reports whether a map_batches step asks for TPU or GPU.
func (d Dataset) onAccelerators() bool {
	for _, s := range d.steps {
		m, ok := s.(MapBatches)
		if !ok {
			continue
		}
		if m.Accelerator != "" || m.Resources[rayvocab.ResourceTPU] > 0 || m.Resources[rayvocab.ResourceGPU] > 0 {
			return true
		}
	}
	return false
}
