package kuberay

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/tpu"
)

// ClusterSlices is what an existing RayCluster offers TPU work, read as
// Ray 2.60's autoscaler reads it (autoscaling_config.py): its TPU worker
// groups, whether the in-tree autoscaler runs, and which version. A
// program that runs a job on the cluster (Options.Cluster) turns it into a
// simulator spec and predicts what the autoscaler does for the plan (sim.
// PredictAutoscaling; package kubesim does both), as `raytpu apply
// --ray-cluster` does before it creates the RayJob: a plan the cluster
// cannot give its slices would otherwise wait forever with its slice
// reservation pending.
type ClusterSlices struct {
	// Namespace and Name of the RayCluster.
	Namespace, Name string
	// Autoscaled: spec.enableInTreeAutoscaling.
	Autoscaled bool
	// AutoscalerVersion is AutoscalerV1 or AutoscalerV2 when Autoscaled:
	// spec.autoscalerOptions.version, else the head's
	// RAY_enable_autoscaler_v2, else Ray 2.60's default under KubeRay, v2
	// (see Autoscaling).
	AutoscalerVersion string
	// Groups are the TPU worker groups, in spec order; other groups are
	// left out.
	Groups []SliceGroup
}

// SliceGroup is one TPU worker group: a replica is one slice of Hosts pods.
type SliceGroup struct {
	// Name is the group's name.
	Name string
	// PodType is Ray's pod type of its slices (v4-16), from the GKE
	// accelerator and topology selectors as Ray's
	// tpu_node_selectors_to_type names it.
	PodType string
	// Topology is the slices' topology (cloud.google.com/gke-tpu-topology).
	Topology string
	// Hosts is numOfHosts, ChipsPerHost the google.com/tpu limit per pod.
	Hosts, ChipsPerHost int
	// Replicas, MinReplicas and MaxReplicas count slices.
	Replicas, MinReplicas, MaxReplicas int
}

// ReadClusterSlices reads RayCluster name of the backend's namespace and
// returns its TPU worker groups (SlicesOf).
func (b *Backend) ReadClusterSlices(ctx context.Context, name string) (*ClusterSlices, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, errors.New("kuberay: ReadClusterSlices: the RayCluster's name is required")
	}
	rc, err := b.client.RayV1().RayClusters(b.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kuberay: reading RayCluster %s/%s: %w", b.opts.Namespace, name, err)
	}
	return SlicesOf(rc)
}

// SlicesOf returns the TPU worker groups of rc. A group with TPU chips or
// TPU selectors whose accelerator, topology or chips per pod raytpu's
// catalog cannot read is an error naming the group and the field.
func SlicesOf(rc *rayv1.RayCluster) (*ClusterSlices, error) {
	if rc == nil {
		return nil, errors.New("kuberay: SlicesOf(nil): pass a RayCluster as the apiserver returns it")
	}
	out := &ClusterSlices{Namespace: rc.Namespace, Name: rc.Name, Autoscaled: rc.Spec.EnableInTreeAutoscaling != nil && *rc.Spec.EnableInTreeAutoscaling}
	if out.Autoscaled {
		out.AutoscalerVersion = autoscalerVersionOf(rc)
	}
	for i := range rc.Spec.WorkerGroupSpecs {
		g := &rc.Spec.WorkerGroupSpecs[i]
		sel := g.Template.Spec.NodeSelector
		accel, topo := sel[tpu.LabelGKEAccelerator], sel[tpu.LabelGKETopology]
		var chips int64
		if cs := g.Template.Spec.Containers; len(cs) > 0 {
			if q, ok := cs[0].Resources.Limits[corev1.ResourceName(tpu.ResourceGKETPU)]; ok {
				chips = q.Value()
			}
		}
		if accel == "" && topo == "" && chips == 0 {
			continue // not a TPU group
		}
		where := fmt.Sprintf("kuberay: RayCluster %s/%s, worker group %q", rc.Namespace, rc.Name, g.GroupName)
		gen := generationOfGKE(accel)
		if gen == nil {
			return nil, fmt.Errorf("%s: nodeSelector %s %q is no TPU accelerator raytpu knows (%v)", where, tpu.LabelGKEAccelerator, accel, gkeAccelerators())
		}
		t, err := tpu.ParseTopology(topo)
		if err != nil {
			return nil, fmt.Errorf("%s: nodeSelector %s %q: %w", where, tpu.LabelGKETopology, topo, err)
		}
		hosts := int(max(1, g.NumOfHosts))
		if chips <= 0 || int64(t.Chips()) != chips*int64(hosts) {
			return nil, fmt.Errorf("%s: %s per pod %d × numOfHosts %d is not the %d chips of topology %s", where, tpu.ResourceGKETPU, chips, hosts, t.Chips(), topo)
		}
		out.Groups = append(out.Groups, SliceGroup{
			Name: g.GroupName, PodType: gen.PodType(t.Chips()), Topology: t.String(),
			Hosts: hosts, ChipsPerHost: int(chips),
			Replicas: int(deref(g.Replicas)), MinReplicas: int(deref(g.MinReplicas)), MaxReplicas: int(deref(g.MaxReplicas)),
		})
	}
	return out, nil
}

// autoscalerVersionOf is the autoscaler version rc runs: KubeRay v1.5.0
// sets RAY_enable_autoscaler_v2 on the head from spec.autoscalerOptions.
// version; without either, Ray 2.60's `ray start --head` turns v2 on under
// KubeRay.
func autoscalerVersionOf(rc *rayv1.RayCluster) string {
	if o := rc.Spec.AutoscalerOptions; o != nil && o.Version != nil {
		return string(*o.Version)
	}
	if cs := rc.Spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		for _, e := range cs[0].Env {
			if e.Name == envAutoscalerV2 {
				if e.Value == "0" || e.Value == "false" {
					return AutoscalerV1
				}
				return AutoscalerV2
			}
		}
	}
	return AutoscalerV2
}

// generationOfGKE is the generation whose GKE accelerator (multi-host or
// single-host) is accel, or nil.
func generationOfGKE(accel string) *tpu.Generation {
	for _, g := range tpu.Generations() {
		if accel != "" && slices.Contains([]string{g.GKEAccelerator, g.GKEAcceleratorSingleHost}, accel) {
			return g
		}
	}
	return nil
}
