package sim

import (
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
)

// Host is one simulated Ray node, described exactly as Ray's TPU
// accelerator manager would register it (ray/_private/accelerators/tpu.py):
//
//   - resources: CPU, memory (bytes), and on TPU hosts TPU: <chips>,
//     accelerator_type:TPU-V6E: 1, <slice name>: 1 and, on worker 0 only,
//     TPU-<pod type>-head: 1;
//   - labels on TPU hosts: ray.io/tpu-slice-name, ray.io/tpu-worker-id,
//     ray.io/tpu-pod-type, ray.io/tpu-topology, ray.io/accelerator-type.
//
// Ray adds object_store_memory and node:<ip> resources of its own; the
// simulator leaves them out. A real node started from a Host gets the same
// resources and labels from the environment in Env plus
// --num-cpus, --memory and --resources '{"TPU": chips}'.
type Host struct {
	// Name is <slice name>-w<worker id> for a TPU host, cpu-<i> for a
	// CPU-only node.
	Name string `json:"name"`
	// SliceName is the slice (Ray's TPU_NAME), "" for a CPU-only node.
	SliceName string `json:"sliceName,omitempty"`
	// WorkerID is TPU_WORKER_ID; -1 for a CPU-only node.
	WorkerID int `json:"workerId"`
	// PodType is Ray's pod type (v6e-16); "" for a CPU-only node.
	PodType  string `json:"podType,omitempty"`
	Topology string `json:"topology,omitempty"`
	// Generation is raytpu's name (v5e, v6e, v7x); "" for a CPU-only node.
	Generation string             `json:"generation,omitempty"`
	Resources  map[string]float64 `json:"resources"`
	Labels     map[string]string  `json:"labels,omitempty"`
}

// IsTPU reports whether h is a TPU host.
func (h Host) IsTPU() bool { return h.SliceName != "" }

// Env returns the environment that makes Ray's TPU manager on a CPU-only
// machine register the node as h: TPU_NAME, TPU_WORKER_ID,
// TPU_ACCELERATOR_TYPE and TPU_TOPOLOGY (nil for a CPU-only node).
func (h Host) Env() map[string]string {
	if !h.IsTPU() {
		return nil
	}
	return rayvocab.HostEnv(h.SliceName, h.WorkerID, h.PodType, h.Topology)
}

// sliceName is the deterministic name of the ordinal-th slice of a pod type.
func sliceName(podType string, ordinal int) string { return podType + "-" + strconv.Itoa(ordinal) }

func hostName(slice string, worker int) string { return slice + "-w" + strconv.Itoa(worker) }

func cpuHostName(i int) string { return "cpu-" + strconv.Itoa(i) }

// Hosts lists every host of s in order: the items in order, each slice's
// workers 0..n-1. Slices are named <pod type>-<i>, counting per pod type
// over the whole spec (v6e-16-0, v6e-16-1, ...); CPU-only nodes cpu-<i>.
// Invalid items are skipped; call Validate first.
func (s Spec) Hosts() []Host {
	rs, _ := s.resolve(field.NewPath("items"))
	var out []Host
	walkHosts(rs, func(r *resolved, slice string, worker, cpuIndex int) {
		out = append(out, hostOf(r, slice, worker, cpuIndex))
	})
	return out
}

// walkHosts calls fn for every host in order.
func walkHosts(rs []resolved, fn func(r *resolved, slice string, worker, cpuIndex int)) {
	ordinals := map[string]int{}
	cpus := 0
	for i := range rs {
		r := &rs[i]
		for range r.item.Count {
			if r.gen == nil {
				fn(r, "", -1, cpus)
				cpus++
				continue
			}
			name := sliceName(r.item.PodType, ordinals[r.item.PodType])
			ordinals[r.item.PodType]++
			for w := range r.hostsPerItem {
				fn(r, name, w, -1)
			}
		}
	}
}

func hostOf(r *resolved, slice string, worker, cpuIndex int) Host {
	h := Host{
		WorkerID: worker,
		Resources: map[string]float64{
			rayvocab.ResourceCPU:    float64(r.item.CPU),
			rayvocab.ResourceMemory: float64(r.item.Memory),
		},
	}
	if r.gen == nil {
		h.Name = cpuHostName(cpuIndex)
		return h
	}
	h.Name = hostName(slice, worker)
	h.SliceName = slice
	h.PodType = r.item.PodType
	h.Topology = r.item.Topology
	h.Generation = r.gen.Name
	for k, v := range tpuResources(r, slice, worker) {
		h.Resources[k] = v
	}
	h.Labels = tpuLabels(r, worker)
	h.Labels[rayvocab.LabelTPUSliceName] = slice
	return h
}

// tpuResources are the TPU resources of one host.
func tpuResources(r *resolved, slice string, worker int) map[string]float64 {
	m := map[string]float64{
		rayvocab.ResourceTPU: float64(r.item.ChipsPerHost),
		rayvocab.AcceleratorTypeResource(r.gen.RayAcceleratorType()): 1,
		slice: 1,
	}
	if worker == 0 {
		m[rayvocab.HeadResource(r.item.PodType)] = 1
	}
	return m
}

// tpuLabels are the labels of one host except the slice name.
func tpuLabels(r *resolved, worker int) map[string]string {
	return map[string]string{
		rayvocab.LabelTPUWorkerID:     strconv.Itoa(worker),
		rayvocab.LabelTPUPodType:      r.item.PodType,
		rayvocab.LabelTPUTopology:     r.item.Topology,
		rayvocab.LabelAcceleratorType: r.gen.RayAcceleratorType(),
	}
}
