package sim

import (
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// Per-host defaults for a spec item that does not set them.
const (
	// DefaultCPU is the CPU resource of every host, TPU or CPU-only.
	DefaultCPU = 8
	// DefaultMemory is the memory resource of every host, in bytes (32 GiB).
	DefaultMemory Bytes = 32 << 30
	// MaxHosts bounds the hosts a spec may describe.
	MaxHosts = 1 << 20
)

// Bounds on one host, which keep its resources exact in Ray's fixed point.
const (
	maxHostCPU    = 1 << 20
	maxHostMemory = Bytes(1 << 46)
)

// CPUPodType is the pod type of a spec item of CPU-only nodes.
const CPUPodType = "cpu"

// Spec describes a simulated cluster: TPU slices and CPU-only nodes, in
// order. Host order, and so every tie the scheduler breaks, follows it.
//
// A spec is written in a short form (see [ParseSpec]) or in YAML (see
// [ParseSpecYAML]); String renders the short form.
type Spec struct {
	Items []Item `json:"items"`
}

// Item is one entry of a spec: Count slices of one pod type, or Count
// CPU-only nodes.
type Item struct {
	// Count of slices (or of CPU-only nodes). Optional. Default: 1, or
	// MinSlices for an autoscaled item, whose Count is the slices it has
	// now (KubeRay's replicas) and may be 0.
	Count int `json:"count"`
	// PodType is Ray's pod type (v6e-16, v5litepod-8, v4-16, v7x-16) or
	// GCE's (tpu7x-16), or "cpu" for CPU-only nodes. Required. ParseSpec
	// stores Ray's form.
	PodType string `json:"podType"`
	// Topology of each slice. Optional. Default: the generation's canonical
	// shape for the pod type's chip count (tpu.Generation.TopologyForChips).
	Topology string `json:"topology,omitempty"`
	// ChipsPerHost splits a slice into hosts. Optional. Default: Ray's rule
	// (tpu.Generation.DefaultChipsPerHost): v5e/v6e 1x1, 2x2 and 2x4 are
	// one host, every other slice has 4 chips per host.
	ChipsPerHost int `json:"chipsPerHost,omitempty"`
	// CPU of each host. Optional. Default: DefaultCPU.
	CPU int `json:"cpu,omitempty"`
	// Memory of each host in bytes. Optional. Default: DefaultMemory.
	Memory Bytes `json:"memory,omitempty"`
	// MaxSlices makes the item an autoscaled TPU worker group (KubeRay's
	// maxReplicas with enableInTreeAutoscaling): Ray's autoscaler may
	// grow it to MaxSlices slices and shrink it to MinSlices (minReplicas,
	// default 0) when its slices idle. See PredictAutoscaling. 0: a fixed
	// item.
	MinSlices int `json:"minSlices,omitempty"`
	MaxSlices int `json:"maxSlices,omitempty"`
}

// Autoscaled reports whether Ray's autoscaler scales the item.
func (it Item) Autoscaled() bool { return it.MaxSlices > 0 }

// IsCPU reports whether the item describes CPU-only nodes.
func (it Item) IsCPU() bool { return strings.EqualFold(strings.TrimSpace(it.PodType), CPUPodType) }

// resolve validates every item and counts hosts.
func (s Spec) resolve(root *field.Path) ([]resolved, field.ErrorList) {
	var errs field.ErrorList
	out := make([]resolved, 0, len(s.Items))
	total := 0
	for i, it := range s.Items {
		r, ierrs := resolveItem(it, fieldsOf(root.Index(i)))
		errs = append(errs, ierrs...)
		if len(ierrs) == 0 {
			if r.item.Count > MaxHosts {
				errs = append(errs, field.Invalid(root.Index(i).Child("count"), r.item.Count, fmt.Sprintf("a spec holds at most %d hosts", MaxHosts)))
				continue
			}
			total += r.item.Count * r.hostsPerItem
			out = append(out, r)
		}
	}
	if total > MaxHosts {
		errs = append(errs, field.Invalid(root, total, fmt.Sprintf("describes %d hosts; a spec holds at most %d", total, MaxHosts)))
	}
	return out, errs
}

// Validate reports every problem with s as a field.ErrorList with paths
// items[i].podType, items[i].topology, ...
func (s Spec) Validate() error {
	_, errs := s.resolve(field.NewPath("items"))
	return errs.Err()
}

// Normalize returns s with every default filled in and pod types in Ray's
// form, or the problems found.
func (s Spec) Normalize() (Spec, error) {
	rs, errs := s.resolve(field.NewPath("items"))
	if len(errs) > 0 {
		return Spec{}, errs
	}
	return specOf(rs), nil
}

func specOf(rs []resolved) Spec {
	out := Spec{Items: make([]Item, len(rs))}
	for i, r := range rs {
		out.Items[i] = r.item
	}
	return out
}

// NumHosts is the number of hosts s describes (invalid items count 0).
func (s Spec) NumHosts() int {
	rs, _ := s.resolve(field.NewPath("items"))
	n := 0
	for _, r := range rs {
		n += r.item.Count * r.hostsPerItem
	}
	return n
}
