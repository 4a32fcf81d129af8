package kubesim

import (
	"errors"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// spec is the simulator's spec of cs: one item per TPU worker group, in
// spec order (the prediction names them items[i]), with the slices the
// group has now and, when the cluster's autoscaler runs, its min and max.
func spec(cs *kuberay.ClusterSlices) sim.Spec {
	var spec sim.Spec
	for _, g := range cs.Groups {
		it := sim.Item{PodType: g.PodType, Topology: g.Topology, ChipsPerHost: g.ChipsPerHost, Count: g.Replicas}
		if cs.Autoscaled {
			it.MinSlices, it.MaxSlices = g.MinReplicas, g.MaxReplicas
		}
		spec.Items = append(spec.Items, it)
	}
	return spec
}

// version is the autoscaler version the prediction for cs follows: the
// one the cluster runs, or v1 when it runs none (a cluster without an
// autoscaled group only has the slices it has, in either version).
func version(cs *kuberay.ClusterSlices) sim.AutoscalerVersion {
	if cs.AutoscalerVersion == "" {
		return sim.AutoscalerV1
	}
	return sim.AutoscalerVersion(cs.AutoscalerVersion)
}

// Predict predicts what the cluster does for plan p: which autoscaled
// groups grow and to how many slices, or, as error findings, why it
// cannot give p its slices (pred.Err() names them). A cluster that is not
// autoscaled is predicted with the slices it has. The error is the
// simulator's when cs cannot be read as a spec.
func Predict(cs *kuberay.ClusterSlices, p *placement.Plan) (*sim.AutoscalePrediction, error) {
	if cs == nil {
		return nil, errors.New("kubesim: nil *kuberay.ClusterSlices: pass what Backend.ReadClusterSlices or kuberay.SlicesOf returned")
	}
	if p == nil {
		return nil, errors.New("kubesim: nil *placement.Plan: pass a compiled plan")
	}
	return sim.PredictAutoscaling(spec(cs), p, version(cs))
}

// Check is kuberay's ClusterCheck of the prediction (use it with
// kuberay.WithClusterCheck): nil when the cluster can give p its slices,
// with those it has or as its autoscaler grows its groups, else the error
// naming every error finding (pred.Err).
func Check(cs *kuberay.ClusterSlices, p *placement.Plan) error {
	pred, err := Predict(cs, p)
	if err != nil {
		return err
	}
	return pred.Err()
}

var _ kuberay.ClusterCheck = Check
