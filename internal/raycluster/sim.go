package raycluster

import (
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

// NodesFor returns the worker nodes that pose as the hosts of a simulated
// cluster spec, so a real local cluster and the simulator hold the same
// fleet: every TPU host gets its TPU_* environment and TPU chips, every
// node cpus CPUs (0: 1).
func NodesFor(spec sim.Spec, cpus int) []Node {
	var nodes []Node
	for _, h := range spec.Hosts() {
		n := Node{Name: h.Name, NumCPUs: cpus, Env: h.Env()}
		if h.IsTPU() {
			n.Resources = map[string]float64{rayvocab.ResourceTPU: h.Resources[rayvocab.ResourceTPU]}
		}
		nodes = append(nodes, n)
	}
	return nodes
}
