package observe

// TPUMetrics is one reading of every TPU slice of a cluster.
type TPUMetrics struct {
	// Slices are sorted by name; hosts without a slice name form a slice
	// named "".
	Slices []Slice `json:"slices"`
}

// Slice is one TPU slice: the hosts sharing a ray.io/tpu-slice-name.
type Slice struct {
	// Name is the slice name (the hosts' TPU_NAME).
	Name string `json:"name"`
	// PodType is Ray's pod type label (ray.io/tpu-pod-type), e.g. v6e-16.
	PodType string `json:"podType,omitempty"`
	// Model is the device plugin's model (Ray's TpuType), e.g.
	// tpu-v6e-slice; "" when no host reported a chip.
	Model string `json:"model,omitempty"`
	// Topology is the slice topology, e.g. 4x4.
	Topology string `json:"topology,omitempty"`
	// Hosts are sorted by worker id, then IP.
	Hosts []Host `json:"hosts"`
}

// Host is one node of a slice.
type Host struct {
	// WorkerID is the ray.io/tpu-worker-id label, -1 when absent.
	WorkerID int    `json:"workerId"`
	NodeID   string `json:"nodeId"`
	IP       string `json:"ip"`
	// Chips are sorted by index. A host whose agent reports no TPU (Ray
	// turned collection off, or the plugin serves other names) has none.
	Chips []Chip `json:"chips"`
	// Err is why the node's metrics could not be read ("" when they were).
	Err string `json:"error,omitempty"`
	// Stale reports that the node's agent read no TPU data from the device
	// plugin in its latest round (its physical stats list no TPU) while its
	// gauges still hold chips: Ray keeps exporting the last values it read.
	// It happens when the plugin fails after a first success, or serves
	// names Ray 2.60 does not read (tensorcore_utilization_node).
	Stale bool `json:"stale,omitempty"`
}

// Chip is one chip's gauges.
type Chip struct {
	// Index is the host-local chip index (Ray's TpuIndex).
	Index int `json:"index"`
	// DeviceName is the device plugin's accelerator_id (TpuDeviceName).
	DeviceName string `json:"deviceName,omitempty"`
	// TensorCoreUtilization, DutyCycle and MemoryBandwidthUtilization are
	// percentages (0-100).
	TensorCoreUtilization      float64 `json:"tensorcoreUtilization"`
	DutyCycle                  float64 `json:"dutyCycle"`
	MemoryBandwidthUtilization float64 `json:"memoryBandwidthUtilization"`
	// HBMUsed and HBMTotal are bytes of high-bandwidth memory.
	HBMUsed  int64 `json:"hbmUsed"`
	HBMTotal int64 `json:"hbmTotal"`
}

// Chips counts the chips reported in the slice.
func (s Slice) Chips() int {
	n := 0
	for _, h := range s.Hosts {
		n += len(h.Chips)
	}
	return n
}
