package observe

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayvocab"
)

// NodeExport is one node with its parsed export, or the error met reading
// it.
type NodeExport struct {
	Node   ray.Node
	Export Export
	Err    error
}

// Group sorts node exports into slices (by the ray.io/tpu-slice-name
// label) and hosts (by ray.io/tpu-worker-id), slices by name, hosts by
// worker id then IP.
func Group(nodes []NodeExport) TPUMetrics {
	bySlice := map[string]*Slice{}
	for _, n := range nodes {
		name := n.Node.Labels[rayvocab.LabelTPUSliceName]
		s := bySlice[name]
		if s == nil {
			s = &Slice{Name: name}
			bySlice[name] = s
		}
		s.PodType = cmp.Or(s.PodType, n.Node.Labels[rayvocab.LabelTPUPodType])
		s.Model = cmp.Or(s.Model, n.Export.Model)
		s.Topology = cmp.Or(s.Topology, n.Node.Labels[rayvocab.LabelTPUTopology], n.Export.Topology)
		h := Host{WorkerID: -1, NodeID: n.Node.ID, IP: n.Node.IP, Chips: n.Export.Chips}
		if w, err := strconv.Atoi(n.Node.Labels[rayvocab.LabelTPUWorkerID]); err == nil {
			h.WorkerID = w
		}
		if h.Chips == nil {
			h.Chips = []Chip{}
		}
		if n.Err != nil {
			h.Err = n.Err.Error()
		}
		h.Stale = len(h.Chips) > 0 && n.Node.ReportedTPUs == 0
		s.Hosts = append(s.Hosts, h)
	}
	out := TPUMetrics{Slices: make([]Slice, 0, len(bySlice))}
	for _, s := range bySlice {
		slices.SortFunc(s.Hosts, func(a, b Host) int {
			return cmp.Or(cmp.Compare(a.WorkerID, b.WorkerID), cmp.Compare(a.IP, b.IP), cmp.Compare(a.NodeID, b.NodeID))
		})
		out.Slices = append(out.Slices, *s)
	}
	slices.SortFunc(out.Slices, func(a, b Slice) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// isTPUNode reports whether a node is worth reading: it has TPU resources
// or a TPU slice label.
func isTPUNode(n ray.Node) bool {
	return n.Resources[rayvocab.ResourceTPU] > 0 || n.Labels[rayvocab.LabelTPUSliceName] != ""
}
