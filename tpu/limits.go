package tpu

// Limits of a slice, from the catalog. Every count a user sets for one
// slice is checked against them before anything that grows with it is
// built; placement's limits table (placement/limits.go) lists them with
// the limits of whole workloads.
const (
	// MaxTopologyDimension bounds each dimension of a parsed topology
	// string. Source: raytpu's parser. Three dimensions of at most 2^16
	// multiply to at most 2^48 chips, so chip arithmetic never overflows;
	// the catalog's longest dimension (v7x 4x4x576 on GKE) is far below.
	MaxTopologyDimension = 1 << 16
	// MaxChipsPerSlice is the most chips of one slice. Source: the
	// catalog's largest slice, v7x at 144 cubes of 4x4x4 (9216 chips,
	// Generation.MaxChips); no topology with more chips resolves.
	MaxChipsPerSlice = 9216
	// MaxHostsPerSlice is the most hosts of one slice. Source: the
	// catalog: MaxChipsPerSlice on hosts of the smallest host size (1
	// chip).
	MaxHostsPerSlice = MaxChipsPerSlice
)
