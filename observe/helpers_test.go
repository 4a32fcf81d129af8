package observe_test

import (
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayvocab"
)

type errString string

func (e errString) Error() string { return string(e) }

// node is a TPU node as the dashboard lists it; empty slice, worker, pod
// type or topology leave the label out.
func node(id, ip, slice, worker, podType, topology string) ray.Node {
	labels := map[string]string{rayvocab.LabelNodeID: id}
	for k, v := range map[string]string{
		rayvocab.LabelTPUSliceName: slice, rayvocab.LabelTPUWorkerID: worker,
		rayvocab.LabelTPUPodType: podType, rayvocab.LabelTPUTopology: topology,
	} {
		if v != "" {
			labels[k] = v
		}
	}
	return ray.Node{ID: id, IP: ip, State: "ALIVE", Labels: labels, MetricsExportPort: 8080, ReportedTPUs: 4,
		Resources: map[string]float64{rayvocab.ResourceTPU: 4}}
}
