// Package rayvocab is the one home of Ray's names that raytpu speaks:
// resource names, the accelerator_type constraint, the ray.io/* node labels
// Ray's TPU manager sets, the TPU_* host environment a TPU VM exposes and
// the MEGASCALE_* variables of a multi-slice job. Every other package takes
// these names from here.
//
// The values follow the installed Ray 2.60 (python/ray/_private/accelerators/tpu.py,
// python/ray/util/tpu.py, python/ray/_private/ray_constants.py).
//
// rayvocab is a leaf: it imports only the standard library.
package rayvocab

import (
	"strconv"
	"strings"
)

// Resource names.
const (
	// ResourceCPU is Ray's CPU resource.
	ResourceCPU = "CPU"
	// ResourceGPU is Ray's GPU resource.
	ResourceGPU = "GPU"
	// ResourceTPU is Ray's TPU chip resource.
	ResourceTPU = "TPU"
	// ResourceMemory and ResourceObjectStoreMemory are Ray's memory resources.
	ResourceMemory            = "memory"
	ResourceObjectStoreMemory = "object_store_memory"
)

// HeadResourceSuffix ends the resource Ray gives worker 0 of every TPU slice.
const HeadResourceSuffix = "-head"

// HeadResource is the custom resource Ray gives worker 0 of a slice of the
// given pod type: TPU-<pod type>-head (e.g. TPU-v6e-16-head).
func HeadResource(podType string) string { return "TPU-" + podType + HeadResourceSuffix }

// AcceleratorTypePrefix starts Ray's accelerator_type:<type> resource,
// which every node of that accelerator holds 1 of.
const AcceleratorTypePrefix = "accelerator_type:"

// AcceleratorTypeResource is Ray's accelerator_type:<type> resource (e.g.
// accelerator_type:TPU-V6E).
func AcceleratorTypeResource(acceleratorType string) string {
	return AcceleratorTypePrefix + acceleratorType
}

// AcceleratorConstraintAmount is how much of accelerator_type:<type> Ray
// adds to a task, actor or Ray Train worker that names an accelerator type.
const AcceleratorConstraintAmount = 0.001

// Labels Ray's TPU manager puts on every TPU node, and the node id label
// Ray puts on every node.
const (
	LabelTPUSliceName    = "ray.io/tpu-slice-name"
	LabelTPUWorkerID     = "ray.io/tpu-worker-id"
	LabelTPUPodType      = "ray.io/tpu-pod-type"
	LabelTPUTopology     = "ray.io/tpu-topology"
	LabelAcceleratorType = "ray.io/accelerator-type"
	LabelNodeID          = "ray.io/node-id"
)

// Environment of a TPU VM host, which Ray's TPU manager reads to register
// the node (and which a CPU machine sets to pose as a TPU host).
const (
	EnvTPUName            = "TPU_NAME"
	EnvTPUWorkerID        = "TPU_WORKER_ID"
	EnvTPUAcceleratorType = "TPU_ACCELERATOR_TYPE"
	EnvTPUTopology        = "TPU_TOPOLOGY"
)

// HostEnv is the TPU_* environment of worker workerID of the slice named
// sliceName, of the given pod type (v4-16) and topology (2x2x2).
func HostEnv(sliceName string, workerID int, podType, topology string) map[string]string {
	return map[string]string{
		EnvTPUName:            sliceName,
		EnvTPUWorkerID:        strconv.Itoa(workerID),
		EnvTPUAcceleratorType: podType,
		EnvTPUTopology:        topology,
	}
}

// Multi-slice (megascale) environment Ray sets on every worker of a
// multi-slice job.
const (
	EnvMegascaleCoordinatorAddress = "MEGASCALE_COORDINATOR_ADDRESS"
	EnvMegascalePort               = "MEGASCALE_PORT"
	EnvMegascaleNumSlices          = "MEGASCALE_NUM_SLICES"
	EnvMegascaleSliceID            = "MEGASCALE_SLICE_ID"
)

// DefaultMegascalePort is Ray's DEFAULT_MEGASCALE_PORT.
const DefaultMegascalePort = 8081

// MegascaleEnv is the MEGASCALE_* environment of the workers of slice
// sliceID out of numSlices, with coordinator address addr.
func MegascaleEnv(addr string, port, numSlices, sliceID int) map[string]string {
	return map[string]string{
		EnvMegascaleCoordinatorAddress: addr,
		EnvMegascalePort:               strconv.Itoa(port),
		EnvMegascaleNumSlices:          strconv.Itoa(numSlices),
		EnvMegascaleSliceID:            strconv.Itoa(sliceID),
	}
}

// ServeLLMOpenAIBuilder is the import path of Ray Serve LLM's
// build_openai_app, the builder of an OpenAI-compatible LLM application.
// Its replicas reserve their TPU slices themselves when they start (a
// deferred slice placement group), not through raytpu's replica runtime.
const ServeLLMOpenAIBuilder = "ray.serve.llm:build_openai_app"

// ServeLLMServerPrefix prefixes the deployment Serve LLM makes for each
// model of an application (LLMServer:<name>).
const ServeLLMServerPrefix = "LLMServer:"

// ServeLLMServerName is the name of the deployment Serve LLM makes for a
// model: LLMServer: and its deployment_config's name, else its model ID
// with "/" as "--" and "." as "_".
func ServeLLMServerName(modelID, deploymentName string) string {
	if deploymentName != "" {
		return ServeLLMServerPrefix + deploymentName
	}
	return ServeLLMServerPrefix + llmNameReplacer.Replace(modelID)
}

var llmNameReplacer = strings.NewReplacer("/", "--", ".", "_")
