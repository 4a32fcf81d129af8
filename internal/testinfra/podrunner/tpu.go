package podrunner

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// KubeRay v1.5.0's pod labels (feature gate RayMultiHostIndexing) that
// GKE's TPU webhook reads for a pod's slice (replica) and host index.
const (
	labelCluster      = "ray.io/cluster"
	labelGroup        = "ray.io/group"
	labelReplicaIndex = "ray.io/worker-group-replica-index"
	labelHostIndex    = "ray.io/replica-host-index"
)

// TPUNode is a node of a GKE TPU node pool: labelled with its accelerator
// (cloud.google.com/gke-tpu-accelerator, e.g. tpu-v4-podslice) and
// topology (cloud.google.com/gke-tpu-topology, e.g. 2x2x2), so that the
// pods of a TPU worker group bind to it, with the host's CPUs and memory
// and room for any number of chips. (GKE has one node per TPU host; one
// node here holds every host of every slice of that shape.)
func TPUNode(name, accelerator, topology string) Node {
	c := hostCapacity()
	c[tpu.ResourceGKETPU] = *resource.NewQuantity(1024, resource.DecimalSI)
	return Node{Name: name, Capacity: c, Labels: map[string]string{
		tpu.LabelGKEAccelerator: accelerator,
		tpu.LabelGKETopology:    topology,
	}}
}

// tpuChips is what container c asks of google.com/tpu (the limit, else the
// request), 0 when nothing.
func tpuChips(c *corev1.Container) int64 {
	if q, ok := c.Resources.Limits[tpu.ResourceGKETPU]; ok && !q.IsZero() {
		return q.Value()
	}
	q := c.Resources.Requests[tpu.ResourceGKETPU]
	return q.Value()
}

// tpuPose is the environment a GKE TPU node pool gives container c of the
// pod, or nil when c asks for no google.com/tpu or the pod does not select
// a TPU node pool (cloud.google.com/gke-tpu-accelerator and -topology):
//
//   - GKE's TPU webhook (ai-on-gke/kuberay-tpu-webhook, with KubeRay
//     v1.5's indexing labels): TPU_WORKER_ID (the pod's
//     ray.io/replica-host-index, 0 on a single-host slice), TPU_NAME
//     (<group>-<replica index>), TPU_WORKER_HOSTNAMES on a multi-host
//     slice (<group>-<replica>-<host>.<cluster>-headless for each host),
//     and when env sets MEGASCALE_NUM_SLICES, MEGASCALE_SLICE_ID (the
//     replica index), MEGASCALE_COORDINATOR_ADDRESS (<group>-0-0.<cluster>-headless)
//     and MEGASCALE_PORT (8081);
//   - the TPU VM's runtime: TPU_ACCELERATOR_TYPE (Ray's pod type, v4-16)
//     and TPU_TOPOLOGY, which with TPU_NAME and TPU_WORKER_ID make Ray's
//     TPU manager register the node as a TPU host (TPU-<pod type>-head on
//     worker 0, the ray.io/tpu-* labels) without the GCE metadata server;
//   - the posing that lets JAX run on the CPU with one device per chip
//     (raycluster.PosingEnv, as the local test cluster's TPU hosts).
//
// Every variable is set only where env (the container's own, resolved)
// does not set it. The pod's spec in the API is not changed (a webhook
// would have patched it).
func (w *worker) tpuPose(c *corev1.Container, env map[string]string) (map[string]string, error) {
	chips := tpuChips(c)
	accel, topo := w.pod.Spec.NodeSelector[tpu.LabelGKEAccelerator], w.pod.Spec.NodeSelector[tpu.LabelGKETopology]
	if chips == 0 || accel == "" || topo == "" {
		return nil, nil
	}
	podType, hosts, err := gkeSlice(accel, topo, chips)
	if err != nil {
		return nil, err
	}
	l := w.pod.Labels
	group, cluster := l[labelGroup], l[labelCluster]
	replica, err := indexLabel(l, labelReplicaIndex, true)
	if err != nil {
		return nil, err
	}
	host, err := indexLabel(l, labelHostIndex, hosts > 1)
	if err != nil {
		return nil, err
	}
	headless := cluster + "-headless"
	pose := rayvocab.HostEnv(fmt.Sprintf("%s-%d", group, replica), host, podType, topo)
	if hosts > 1 {
		names := make([]string, hosts)
		for i := range names {
			names[i] = fmt.Sprintf("%s-%d-%d.%s", group, replica, i, headless)
		}
		pose["TPU_WORKER_HOSTNAMES"] = strings.Join(names, ",")
	}
	if _, ok := env[rayvocab.EnvMegascaleNumSlices]; ok {
		pose[rayvocab.EnvMegascaleSliceID] = strconv.Itoa(replica)
		pose[rayvocab.EnvMegascaleCoordinatorAddress] = fmt.Sprintf("%s-0-0.%s", group, headless)
		pose[rayvocab.EnvMegascalePort] = strconv.Itoa(rayvocab.DefaultMegascalePort)
	}
	merged := maps.Clone(env)
	for k, v := range pose {
		if _, ok := merged[k]; !ok {
			merged[k] = v
		}
	}
	out := map[string]string{}
	for k, v := range raycluster.PosingEnv(merged, int(chips)) {
		if _, ok := env[k]; !ok {
			out[k] = v
		}
	}
	return out, nil
}

// gkeSlice is Ray's pod type and the host count of a GKE TPU slice of
// accelerator accel and topology topo whose pods ask for chips chips each.
func gkeSlice(accel, topo string, chips int64) (string, int, error) {
	var gen *tpu.Generation
	var known []string
	for _, g := range tpu.Generations() {
		if g.GKEAccelerator == accel || g.GKEAcceleratorSingleHost == accel {
			gen = g
		}
		for _, a := range []string{g.GKEAccelerator, g.GKEAcceleratorSingleHost} {
			if a != "" {
				known = append(known, a)
			}
		}
	}
	if gen == nil {
		return "", 0, fmt.Errorf("nodeSelector %s: unknown TPU accelerator %q; known: %s", tpu.LabelGKEAccelerator, accel, strings.Join(known, ", "))
	}
	t, err := tpu.ParseTopology(topo)
	if err != nil {
		return "", 0, fmt.Errorf("nodeSelector %s: %w", tpu.LabelGKETopology, err)
	}
	if int64(t.Chips())%chips != 0 {
		return "", 0, fmt.Errorf("resources %s: %d chips per pod do not divide the %d chips of topology %s", tpu.ResourceGKETPU, chips, t.Chips(), topo)
	}
	return gen.PodType(t.Chips()), int(int64(t.Chips()) / chips), nil
}

// indexLabel reads a non-negative index label; a missing one is 0 unless
// required.
func indexLabel(l map[string]string, key string, required bool) (int, error) {
	v, ok := l[key]
	if !ok {
		if required {
			return 0, fmt.Errorf("label %s is missing: a TPU pod's slice and host come from KubeRay's indexing labels (feature gate RayMultiHostIndexing)", key)
		}
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("label %s=%q: want a non-negative integer", key, v)
	}
	return n, nil
}
