package tpuplugin

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Config describes the host a Server stands beside.
type Config struct {
	// SliceName is the slice's name (TPU_NAME). Required. It seeds the
	// number before the dash of every accelerator_id.
	SliceName string
	// WorkerID is the host's index in the slice (TPU_WORKER_ID), >= 0.
	WorkerID int
	// Chips is the number of chips on the host. Required (> 0).
	Chips int
	// Model is the model label: GKE's accelerator name, e.g.
	// tpu-v6e-slice. Required.
	Model string
	// Topology is the tpu_topology label, e.g. 2x4. Required.
	Topology string
	// MemoryTotal is every chip's memory_total in bytes until Set changes
	// it. Optional. Default: 0.
	MemoryTotal float64
	// Container, Namespace and Pod are the labels of the runtime samples.
	// Optional. Default: "ray-worker", "default" and "<SliceName>-<WorkerID>".
	Container, Namespace, Pod string
	// NodeSuffix names the node-scoped families tensorcore_utilization_node
	// and memory_bandwidth_utilization_node, as tpu-device-plugin
	// v1.35.7-gke.0 does, instead of the names Ray 2.60 reads. Optional.
	// Default: false.
	NodeSuffix bool
}

// ConfigForHost derives a Config from a posing host's TPU_* environment
// (TPU_NAME, TPU_WORKER_ID, TPU_ACCELERATOR_TYPE, TPU_TOPOLOGY) and its
// chip count: the model is the generation's GKE accelerator name and
// memory_total its HBM per chip.
func ConfigForHost(env map[string]string, chips int) (Config, error) {
	podType := env[rayvocab.EnvTPUAcceleratorType]
	gen, _, err := tpu.ParsePodType(podType)
	if err != nil {
		return Config{}, fmt.Errorf("tpuplugin: %s=%q: %w", rayvocab.EnvTPUAcceleratorType, podType, err)
	}
	worker, err := strconv.Atoi(env[rayvocab.EnvTPUWorkerID])
	if err != nil {
		return Config{}, fmt.Errorf("tpuplugin: %s=%q: want a worker index >= 0", rayvocab.EnvTPUWorkerID, env[rayvocab.EnvTPUWorkerID])
	}
	model := gen.GKEAccelerator
	if model == "" {
		model = "tpu-" + gen.Name + "-slice"
	}
	cfg := Config{
		SliceName:   env[rayvocab.EnvTPUName],
		WorkerID:    worker,
		Chips:       chips,
		Model:       model,
		Topology:    env[rayvocab.EnvTPUTopology],
		MemoryTotal: gen.HBMGiB * (1 << 30),
	}
	return cfg, cfg.validate()
}

func (c *Config) validate() error {
	switch {
	case c.SliceName == "":
		return fmt.Errorf("tpuplugin: Config.SliceName is empty: want the slice's TPU_NAME")
	case c.WorkerID < 0:
		return fmt.Errorf("tpuplugin: Config.WorkerID is %d: want >= 0", c.WorkerID)
	case c.Chips <= 0:
		return fmt.Errorf("tpuplugin: Config.Chips is %d: want > 0", c.Chips)
	case c.Model == "":
		return fmt.Errorf("tpuplugin: Config.Model is empty: want a GKE accelerator name such as tpu-v6e-slice")
	case c.Topology == "":
		return fmt.Errorf("tpuplugin: Config.Topology is empty: want the slice topology such as 2x4")
	case c.MemoryTotal < 0:
		return fmt.Errorf("tpuplugin: Config.MemoryTotal is %g: want >= 0", c.MemoryTotal)
	}
	return nil
}

func (c *Config) defaults() {
	if c.Container == "" {
		c.Container = "ray-worker"
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Pod == "" {
		c.Pod = c.SliceName + "-" + strconv.Itoa(c.WorkerID)
	}
}

// SliceNumber is the number before the dash of the accelerator ids of a
// slice: a decimal number derived from the slice name, the shape of the
// ids a real plugin serves (e.g. 4804690994094478883-0).
func SliceNumber(sliceName string) string {
	h := fnv.New64a()
	h.Write([]byte(sliceName))
	return strconv.FormatUint(h.Sum64()>>1, 10)
}

// AcceleratorID is the accelerator_id of chip index (host-local for node
// samples, slice-global for runtime samples) of the named slice.
func AcceleratorID(sliceName string, index int) string {
	return SliceNumber(sliceName) + "-" + strconv.Itoa(index)
}
