package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// AutoscalerVersion is the Ray autoscaler a prediction follows.
type AutoscalerVersion string

// Autoscaler versions. Under KubeRay v1.5.0, Ray 2.60's `ray start --head`
// turns on v2 unless the head's environment sets RAY_enable_autoscaler_v2
// (run_kuberay_autoscaler then asks the GCS which one runs); raytpu's
// kuberay rendering sets it to 0, so its clusters run v1 unless they ask
// for v2 (see kuberay.Autoscaling).
const (
	AutoscalerV1 AutoscalerVersion = "v1"
	AutoscalerV2 AutoscalerVersion = "v2"
)

// AutoscalerVersions lists the versions PredictAutoscaling takes.
func AutoscalerVersions() []string { return []string{string(AutoscalerV1), string(AutoscalerV2)} }

// Finding codes of an autoscaling prediction.
const (
	// CodeScaleUp: the autoscaler adds slices to a group.
	CodeScaleUp = "ScaleUp"
	// CodeMaxSlicesTooSmall: the groups that offer the slice stop at their
	// maxSlices before the plan has the slices it needs.
	CodeMaxSlicesTooSmall = "MaxSlicesTooSmall"
	// CodeNoGroupOffers: no group of the spec offers the slice (pod type
	// and topology), fixed or autoscaled.
	CodeNoGroupOffers = "NoGroupOffersSlice"
	// CodeHostsMismatch: a group offers the slice's chips and topology, but
	// split into other hosts (single-host against multi-host).
	CodeHostsMismatch = "HostsPerSliceMismatch"
	// CodeNotAutoscaled: the slices of that shape are all taken and none of
	// their groups is autoscaled.
	CodeNotAutoscaled = "NotAutoscaled"
	// CodeV2MultiHost: autoscaler v2 does not start multi-host slices.
	CodeV2MultiHost = "AutoscalerV2MultiHost"
	// CodeSurplusSlices: the autoscaler adds more slices than the plan
	// uses; they idle until the idle timeout removes them.
	CodeSurplusSlices = "SurplusSlices"
	// CodeNoSliceScaleDown: autoscaler v1 does not take a multi-host
	// group of two or more slices down by one slice; the group goes down
	// only when all its hosts idle out together, to zero.
	CodeNoSliceScaleDown = "NoSingleSliceScaleDown"
)

// GroupScale is what the autoscaler does to one autoscaled item.
type GroupScale struct {
	// Item is the index of the item in the spec.
	Item int `json:"item"`
	// PodType, Topology and HostsPerSlice describe its slices.
	PodType       string `json:"podType"`
	Topology      string `json:"topology"`
	HostsPerSlice int    `json:"hostsPerSlice"`
	// MinSlices and MaxSlices are its bounds; From the slices it has, To
	// the slices it has once the autoscaler is done with the plan.
	MinSlices int `json:"minSlices"`
	MaxSlices int `json:"maxSlices"`
	From      int `json:"from"`
	To        int `json:"to"`
}

// Scaled reports whether the autoscaler changes the group.
func (g GroupScale) Scaled() bool { return g.To != g.From }

// String says what happens to the group, in the words raytpu shows
// wherever the prediction appears.
func (g GroupScale) String() string {
	name := fmt.Sprintf("items[%d] %s (%s, %d hosts per slice, min %d, max %d)", g.Item, g.PodType, g.Topology, g.HostsPerSlice, g.MinSlices, g.MaxSlices)
	if !g.Scaled() {
		return fmt.Sprintf("%s: stays at %s", name, plural(g.From, "slice"))
	}
	return fmt.Sprintf("%s: scales from %d to %s (%d to %d pods)", name, g.From, plural(g.To, "slice"), g.From*g.HostsPerSlice, g.To*g.HostsPerSlice)
}

// IdleSlices is the slices Ray's v1 autoscaler on KubeRay leaves the
// group at once every host of its To slices idles out in the same pass.
// It keeps min_workers hosts of the node type, MinSlices×HostsPerSlice,
// and its KubeRay provider writes the hosts it keeps as the group's
// replicas, capped at MaxSlices: a multi-host group with a minimum does
// not go back to MinSlices but to that many hosts' worth of slices. A
// group at or below its minimum has nothing idle to remove and stays.
func (g GroupScale) IdleSlices() int {
	if g.To <= g.MinSlices {
		return g.To
	}
	return min(g.MinSlices*g.HostsPerSlice, g.MaxSlices)
}

// AutoscalePrediction is what Ray's autoscaler is predicted to do for a
// plan on a spec: every autoscaled item's scale, and findings that say
// which slices it adds, which it cannot and why, each in words a user can
// act on.
type AutoscalePrediction struct {
	Version  AutoscalerVersion   `json:"version"`
	Groups   []GroupScale        `json:"groups"`
	Findings placement.Diagnosis `json:"findings,omitempty"`
}

// Spec returns spec with every autoscaled item at the slices the
// prediction ends with: the cluster the plan then runs on.
func (p *AutoscalePrediction) Spec(spec Spec) Spec {
	out := Spec{Items: slices.Clone(spec.Items)}
	if p == nil {
		return out
	}
	for _, g := range p.Groups {
		if g.Item < len(out.Items) {
			out.Items[g.Item].Count = g.To
		}
	}
	return out
}

// Err is nil, or an error naming the prediction's error findings.
func (p *AutoscalePrediction) Err() error {
	if p == nil {
		return errors.New("sim: Err on a nil *AutoscalePrediction; use the one PredictAutoscaling returns")
	}
	var msgs []string
	for _, f := range p.Findings {
		if f.Severity == placement.SeverityError && f.Part != "" {
			msgs = append(msgs, f.Code+": "+f.Part+": "+f.Message)
		} else if f.Severity == placement.SeverityError {
			msgs = append(msgs, f.Code+": "+f.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("sim: the autoscaler cannot give the plan its slices: %s", strings.Join(msgs, "; "))
}

// PredictAutoscaling predicts what Ray 2.60's autoscaler on KubeRay
// v1.5.0 does when plan p is submitted to an idle cluster of spec: which
// autoscaled items (TPU worker groups with maxSlices) it grows and to how
// many slices, or why it cannot give a slice group its slices. Every slice
// the spec has now is taken to be free.
//
// The model follows Ray's code:
//
//   - the autoscaler's node types come from the RayCluster
//     (autoscaling_config.py, _node_type_from_group_spec and
//     _get_ray_resources_from_group_spec): one node type per group, each
//     node one pod with TPU: chips per host and the slice's head resource
//     TPU-<pod type>-head (pod type from the group's GKE accelerator and
//     topology selectors, utils.tpu_node_selectors_to_type), min_workers
//     and max_workers = min/maxReplicas × numOfHosts. A slice group is
//     served by the groups of its exact pod type, topology and chips per
//     host, taken in spec order (where v1's utilization scorer ties);
//   - a multi-host slice is reserved by a placement group on its head
//     resource ({TPU-<pod type>-head: 1}, label selector ray.io/tpu-worker-id
//     0 and ray.io/tpu-pod-type; reserve_tpu_slice), one slice after
//     another (SlicePlacementGroup._reserve_slice waits for each head).
//     That demand is one host;
//   - v1 (resource_demand_scheduler.py, get_nodes_to_launch) launches one
//     host for it, ignoring label selectors, and the KubeRay node provider
//     (BatchingNodeProvider.create_node, then
//     KubeRayNodeProvider._scale_request_to_patch_payload) writes the
//     group's pods plus that host as its replicas, capped at maxReplicas:
//     from r slices of h hosts it goes to min(max, r×h + 1). From zero
//     that is one slice; from a slice or more of a multi-host group it
//     overshoots, and the surplus slices idle until the idle timeout;
//   - v2 (scheduler.py, _try_schedule_one and _satisfies_label_constraints)
//     places the head demand only on a node type whose static labels
//     carry ray.io/tpu-worker-id 0, which no group's labels can truly
//     say, and its KubeRay provider (KubeRayProvider._submit_scale_request)
//     turns hosts into replicas by whole division (1 // h = 0): it does not
//     start a multi-host slice. Single-host slices (h = 1) have no head
//     reservation and scale one replica per slice in both versions;
//   - upscaling mode: Conservative (upscaling_speed 1) still allows 5
//     pending nodes of a type (AUTOSCALER_UPSCALING_INITIAL_NUM_NODES),
//     more than one head at a time asks, so it does not change the result.
//
// Not modelled: several workloads reserving heads at once (each pending
// head adds a host, so concurrent reservations overshoot further), and
// resources other than TPU on the hosts. The result is deterministic.
func PredictAutoscaling(spec Spec, p *placement.Plan, version AutoscalerVersion) (*AutoscalePrediction, error) {
	if version == "" {
		version = AutoscalerV1
	}
	if version != AutoscalerV1 && version != AutoscalerV2 {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("version"), string(version), AutoscalerVersions())}
	}
	if p == nil {
		return nil, field.ErrorList{field.Required(field.NewPath("plan"), "a compiled plan")}
	}
	rs, errs := spec.resolve(field.NewPath("items"))
	if len(errs) > 0 {
		return nil, errs
	}
	pred := &AutoscalePrediction{Version: version, Groups: []GroupScale{}}
	// free counts the idle slices of each item; cur its slices.
	free := make([]int, len(rs))
	cur := make([]int, len(rs))
	for i, r := range rs {
		if r.gen != nil {
			cur[i], free[i] = r.item.Count, r.item.Count
		}
	}
	for gi, g := range p.Slices {
		part := sliceGroupPart(gi, g)
		need := g.NumSlices
		var exact []int
		for i, r := range rs {
			if r.gen != nil && r.item.PodType == g.PodType && r.item.Topology == g.Topology && r.item.ChipsPerHost == g.ChipsPerHost {
				exact = append(exact, i)
			}
		}
		for _, i := range exact {
			take := min(free[i], need)
			free[i] -= take
			need -= take
		}
		if need == 0 {
			continue
		}
		var autos []int
		for _, i := range exact {
			if rs[i].item.Autoscaled() {
				autos = append(autos, i)
			}
		}
		if len(autos) == 0 {
			pred.Findings = append(pred.Findings, noGroupFinding(rs, exact, g, part, need))
			continue
		}
		if version == AutoscalerV2 && g.MultiHost {
			pred.Findings = append(pred.Findings, placement.Finding{Severity: placement.SeverityError, Code: CodeV2MultiHost, Part: part, Message: fmt.Sprintf(
				"autoscaler v2 does not start a multi-host %s slice (%s, %d hosts): the head reservation's label selector %s=0 matches no worker group's labels, and KubeRay's provider rounds 1 host down to 0 replicas; run autoscaler v1 (raytpu renders it unless asked for v2: RAY_enable_autoscaler_v2=0 on the head; Ray 2.60 under KubeRay otherwise runs v2) or set minSlices to %d so the slices exist before the work",
				g.PodType, g.Topology, g.HostsPerSlice, rayvocab.LabelTPUWorkerID, g.NumSlices)})
			continue
		}
		for _, i := range autos {
			r := rs[i]
			for need > 0 && cur[i] < r.item.MaxSlices {
				next := cur[i] + 1
				if version == AutoscalerV1 && r.hostsPerItem > 1 {
					// v1 writes pods + the one new host as replicas.
					next = min(r.item.MaxSlices, cur[i]*r.hostsPerItem+1)
				}
				free[i] += next - cur[i]
				cur[i] = next
				take := min(free[i], need)
				free[i] -= take
				need -= take
			}
		}
		if need > 0 {
			var bounds []string
			for _, i := range autos {
				bounds = append(bounds, fmt.Sprintf("items[%d] stops at maxSlices %d", i, rs[i].item.MaxSlices))
			}
			last := autos[len(autos)-1]
			pred.Findings = append(pred.Findings, placement.Finding{Severity: placement.SeverityError, Code: CodeMaxSlicesTooSmall, Part: part, Message: fmt.Sprintf(
				"needs %s (%s) at once and %d more than the cluster can reach: %s; raise maxSlices of items[%d] to %d",
				plural(g.NumSlices, g.PodType+" slice"), g.Topology, need, strings.Join(bounds, ", "), last, rs[last].item.MaxSlices+need)})
		}
	}
	for i, r := range rs {
		if !r.item.Autoscaled() {
			continue
		}
		gs := GroupScale{Item: i, PodType: r.item.PodType, Topology: r.item.Topology, HostsPerSlice: r.hostsPerItem,
			MinSlices: r.item.MinSlices, MaxSlices: r.item.MaxSlices, From: r.item.Count, To: cur[i]}
		pred.Groups = append(pred.Groups, gs)
		if gs.Scaled() {
			pred.Findings = append(pred.Findings, placement.Finding{Severity: placement.SeverityInfo, Code: CodeScaleUp, Message: gs.String()})
		}
		if version == AutoscalerV1 && r.hostsPerItem > 1 && gs.To >= 2 {
			pred.Findings = append(pred.Findings, noSliceScaleDown(i, r, gs))
		}
		if surplus := min(free[i], gs.To-gs.From); surplus > 0 {
			pred.Findings = append(pred.Findings, placement.Finding{Severity: placement.SeverityWarning, Code: CodeSurplusSlices, Message: fmt.Sprintf(
				"items[%d] %s: %d of the %d slices added stay idle until the idle timeout removes them: Ray's v1 autoscaler on KubeRay writes a group's pods plus one host as its replicas, so a multi-host group that already has a slice grows by more than one; lower maxSlices of items[%d] to %d to cap it",
				i, r.item.PodType, surplus, gs.To-gs.From, i, gs.To-surplus)})
		}
	}
	return pred, nil
}

// noSliceScaleDown says what autoscaler v1 does when one slice of a
// multi-host group of gs.To slices idles out (BatchingNodeProvider's
// terminate_node, then KubeRayNodeProvider._scale_request_to_patch_payload):
// it counts the group in pods, so it asks for the pods it keeps,
// (To-1)×hosts, and writes that number as the group's replicas, capped
// at maxSlices. For two or more slices of two or more hosts that is never
// fewer than the slices the group had: KubeRay deletes the idle slice's
// pods (workersToDelete) and starts a slice in their place, or more.
// The group goes down when all its hosts idle out in one pass: to zero,
// or, with a minSlices, to the hosts the autoscaler keeps (min_workers,
// minSlices×hosts) written as replicas.
func noSliceScaleDown(i int, r resolved, gs GroupScale) placement.Finding {
	kept := (gs.To - 1) * r.hostsPerItem
	next := min(kept, gs.MaxSlices)
	what := "starts a new slice in place of the one it deleted, which idles in turn"
	if next > gs.To {
		what = fmt.Sprintf("takes the group to %s", plural(next, "slice"))
	}
	down := "the group goes down only when all its hosts idle out in the same autoscaler pass, to zero"
	if gs.MinSlices > 0 {
		down = fmt.Sprintf("with minSlices %d the autoscaler keeps %d of its hosts, which it writes as replicas too: the group does not go below %s",
			gs.MinSlices, gs.MinSlices*r.hostsPerItem, plural(gs.IdleSlices(), "slice"))
	}
	return placement.Finding{Severity: placement.SeverityWarning, Code: CodeNoSliceScaleDown, Message: fmt.Sprintf(
		"items[%d] %s: at %s the group does not give back one slice: when one slice's hosts idle out, Ray's v1 autoscaler on KubeRay writes the pods it keeps (%d) as the group's replicas, so KubeRay %s; %s",
		i, r.item.PodType, plural(gs.To, "slice"), kept, what, down)}
}

// sliceGroupPart names slice group i of a plan in findings.
func sliceGroupPart(i int, g *placement.SliceGroup) string {
	name := "slices[" + strconv.Itoa(i) + "]"
	if s := g.Part.String(); s != "" && g.Part.Name != "" {
		name += " " + s
	}
	return name
}

// noGroupFinding says why no autoscaled group serves slice group g.
func noGroupFinding(rs []resolved, exact []int, g *placement.SliceGroup, part string, need int) placement.Finding {
	if len(exact) > 0 {
		return placement.Finding{Severity: placement.SeverityError, Code: CodeNotAutoscaled, Part: part, Message: fmt.Sprintf(
			"needs %s more (%s) than the cluster has, and no group of them is autoscaled: give items[%d] maxSlices %d",
			plural(need, g.PodType+" slice"), g.Topology, exact[0], rs[exact[0]].item.Count+need)}
	}
	for i, r := range rs {
		if r.gen != nil && r.gen.Name == g.Generation && r.item.Topology == g.Topology {
			kind := func(hosts, chips int) string {
				if hosts == 1 {
					return fmt.Sprintf("single-host (1 host of %d chips)", chips)
				}
				return fmt.Sprintf("multi-host (%d hosts of %d chips)", hosts, chips)
			}
			return placement.Finding{Severity: placement.SeverityError, Code: CodeHostsMismatch, Part: part, Message: fmt.Sprintf(
				"needs %s %s slices but items[%d] offers them %s: the plan's bundles and the group's pods do not line up; set the group's chips per host to %d (numOfHosts %d) or compile the plan with chips_per_host %d",
				g.Topology, kind(g.HostsPerSlice, g.ChipsPerHost), i, kind(r.hostsPerItem, r.item.ChipsPerHost), g.ChipsPerHost, g.HostsPerSlice, r.item.ChipsPerHost)}
		}
	}
	var offered []string
	for _, r := range rs {
		if r.gen != nil {
			offered = append(offered, r.item.PodType+" ("+r.item.Topology+")")
		}
	}
	have := "the cluster has no TPU groups"
	if len(offered) > 0 {
		have = "the groups offer " + strings.Join(slices.Compact(offered), ", ")
	}
	return placement.Finding{Severity: placement.SeverityError, Code: CodeNoGroupOffers, Part: part, Message: fmt.Sprintf(
		"needs %s (%s) and no group offers that topology (%s); add a worker group of %s %s with maxSlices %d",
		plural(g.NumSlices, g.PodType+" slice"), g.Topology, have, g.PodType, g.Topology, g.NumSlices)}
}
