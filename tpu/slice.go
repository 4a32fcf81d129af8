package tpu

// Slice is a resolved TPU slice: one generation, one topology, one host size.
type Slice struct {
	// Generation is the slice's own copy of the catalog's entry.
	Generation *Generation
	Topology   Topology
	// ChipsPerHost is the resolved host size (machine type, override, or
	// the default rule).
	ChipsPerHost int
	// MachineType is the GCE machine type of each host ("" when the
	// generation has none).
	MachineType string
	// RayValid and GKEValid give each rule set's verdict on the topology;
	// RayReason and GKEReason say why not.
	RayValid, GKEValid   bool
	RayReason, GKEReason string
}

// Chips is the number of chips in the slice (0 for a nil Slice).
//
// The methods of Slice take a nil receiver and a zero Slice (one not made
// by resolving a spec, with no Generation): they answer 0, false, "" or
// nil rather than panic.
func (s *Slice) Chips() int {
	if s == nil {
		return 0
	}
	return s.Topology.Chips()
}

// Hosts is chips / chips per host: at least 1 for a resolved slice, 0 for a
// nil Slice or one without a positive ChipsPerHost.
func (s *Slice) Hosts() int {
	if s == nil || s.ChipsPerHost <= 0 {
		return 0
	}
	return max(1, s.Topology.Chips()/s.ChipsPerHost)
}

// MultiHost reports whether the slice spans more than one host. Ray treats a
// slice as single-host when chips <= chips per host.
func (s *Slice) MultiHost() bool {
	if s == nil {
		return false
	}
	return s.Topology.Chips() > s.ChipsPerHost
}

// PodType is Ray's pod type (label ray.io/tpu-pod-type), e.g. v6e-16.
func (s *Slice) PodType() string {
	if s == nil {
		return ""
	}
	return s.Generation.PodType(s.Topology.Chips())
}

// GCEAcceleratorType is the GCE accelerator type, e.g. tpu7x-16.
func (s *Slice) GCEAcceleratorType() string {
	if s == nil {
		return ""
	}
	return s.Generation.GCEAcceleratorType(s.Topology.Chips())
}

// RayAcceleratorType is Ray's accelerator type, e.g. TPU-V6E.
func (s *Slice) RayAcceleratorType() string {
	if s == nil {
		return ""
	}
	return s.Generation.RayAcceleratorType()
}

// GKEAccelerator is the value of cloud.google.com/gke-tpu-accelerator, or
// "" when GKE does not offer the generation.
func (s *Slice) GKEAccelerator() string {
	if s == nil || s.Generation == nil {
		return ""
	}
	g := s.Generation
	if g.GKEAcceleratorSingleHost != "" && !s.MultiHost() {
		return g.GKEAcceleratorSingleHost
	}
	return g.GKEAccelerator
}

// GKENodeSelector is the node selector a GKE pod of this slice carries
// (nil when GKE does not offer the generation).
func (s *Slice) GKENodeSelector() map[string]string {
	acc := s.GKEAccelerator()
	if acc == "" {
		return nil
	}
	return map[string]string{
		LabelGKEAccelerator: acc,
		LabelGKETopology:    s.Topology.String(),
	}
}

// DevicesPerHost is the JAX device count on each host.
func (s *Slice) DevicesPerHost() int {
	if s == nil || s.Generation == nil {
		return 0
	}
	return s.ChipsPerHost * s.Generation.DevicesPerChip
}

// Devices is the JAX device count of the whole slice.
func (s *Slice) Devices() int {
	if s == nil || s.Generation == nil {
		return 0
	}
	return s.Topology.Chips() * s.Generation.DevicesPerChip
}

// HBMGiB is the slice's total HBM (approximate).
func (s *Slice) HBMGiB() float64 {
	if s == nil || s.Generation == nil {
		return 0
	}
	return float64(s.Topology.Chips()) * s.Generation.HBMGiB
}

// PeakBF16TFLOPS is the slice's total peak bf16 TFLOP/s (approximate).
func (s *Slice) PeakBF16TFLOPS() float64 {
	if s == nil || s.Generation == nil {
		return 0
	}
	return float64(s.Topology.Chips()) * s.Generation.PeakBF16TFLOPS
}
