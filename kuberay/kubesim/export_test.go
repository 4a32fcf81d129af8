package kubesim

// Spec and Version are the simulator's spec and autoscaler version of a
// cluster, as the tests look at them.
var (
	Spec    = spec
	Version = version
)
