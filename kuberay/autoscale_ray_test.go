package kuberay_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// autoscalerDemands is what testdata/autoscale/demand.py answers for one
// RayCluster: the node types Ray's autoscaler derives from it, and for
// each demand the nodes v1 would add (or the bundles it finds no node
// type for).
type autoscalerDemands struct {
	Types   map[string]map[string]float64 `json:"types"`
	Demands []struct {
		Launch     map[string]int       `json:"launch"`
		Infeasible []map[string]float64 `json:"infeasible"`
	} `json:"demands"`
}

// autoscalerCase is a RayCluster, as the API server stores it, and its
// demands, each a list of bundles pending together.
type autoscalerCase struct {
	Cluster map[string]any         `json:"cluster"`
	Demands [][]map[string]float64 `json:"demands"`
}

// askAutoscaler runs demand.py in the project virtualenv on the cases.
func askAutoscaler(t *testing.T, cases []autoscalerCase) []autoscalerDemands {
	t.Helper()
	req, err := json.Marshal(map[string]any{"cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), venvtest.Python(t), filepath.Join("testdata", "autoscale", "demand.py"))
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("demand.py: %v\n%s", err, stderr.String())
	}
	var res struct {
		Results []autoscalerDemands `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != len(cases) {
		t.Fatalf("demand.py printed %.500s (%v), want %d results", out, err, len(cases))
	}
	return res.Results
}

// autoscaledCluster renders an autoscaled RayCluster of one slice of the
// shape, as a JSON object, and returns it with the demands of a
// one-slice JaxTrainer on that shape: its head reservations and its
// bundles.
func autoscaledCluster(t *testing.T, accel, topo string) (cluster map[string]any, heads, bundles []map[string]float64, group string) {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: accel, Topology: topo}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := kuberay.RenderCluster(placement.NewSlicePlan("scaled", g), kuberay.Options{Autoscaling: &kuberay.Autoscaling{MaxSlices: 2}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cluster); err != nil {
		t.Fatal(err)
	}
	jg := compile(t, trainer(accel, topo, 1)).Slices[0]
	for _, h := range jg.Heads {
		heads = append(heads, h.Resources)
	}
	for range jg.BundlesPerSlice {
		bundles = append(bundles, jg.BundleResources)
	}
	return cluster, heads, bundles, *rc.Spec.WorkerGroupSpecs[0].GroupName
}

// withAcceleratorType is cluster with its worker group's resources holding
// accelerator_type:<accel> (on) or not (off).
func withAcceleratorType(t *testing.T, cluster map[string]any, accel string, on bool) map[string]any {
	t.Helper()
	b, err := json.Marshal(cluster)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	wg := out["spec"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)
	res, _ := wg["resources"].(map[string]any)
	if res == nil {
		res = map[string]any{}
	}
	if on {
		res[rayvocab.AcceleratorTypeResource(accel)] = "1"
	} else {
		delete(res, rayvocab.AcceleratorTypeResource(accel))
	}
	if len(res) == 0 {
		delete(wg, "resources")
	} else {
		wg["resources"] = res
	}
	return out
}

// Ray's v1 autoscaler, run on raytpu's autoscaled RayClusters through its
// own code (the node types it derives from a RayCluster under KubeRay and
// its scheduler's choice of nodes to add to a cluster of the head alone),
// adds what one slice needs for a one-slice JaxTrainer's demands:
//   - single-host v6e 2x4: the bundle ({TPU: 8, CPU: 1,
//     accelerator_type:TPU-V6E: 0.001}; no head reservation) launches one
//     node, one replica. It finds a node type only because raytpu lists
//     accelerator_type:TPU-V6E in the group's resources: KubeRay's
//     autoscaling config derives it from nothing else, although Ray sets
//     it on every TPU host. Without it the bundle is infeasible and the
//     group never leaves zero.
//   - multi-host v4 2x2x2: the head reservation ({TPU-v4-16-head: 1})
//     launches one node; with the head and the two bundles pending
//     together, one node still, the bundles infeasible. raytpu leaves
//     accelerator_type out of multi-host groups for this: with it, the
//     bundles launch a second node, and KubeRay's provider turns each
//     added host into a whole replica, two slices for a one-slice job
//     (what the autoscaler did in the end-to-end test when every TPU
//     group listed it).
func TestAutoscalerFindsANodeTypeForEveryDemand(t *testing.T) {
	t.Parallel()
	single, singleHeads, singleBundles, singleGroup := autoscaledCluster(t, "v6e", "2x4")
	multi, multiHeads, multiBundles, multiGroup := autoscaledCluster(t, "v4", "2x2x2")
	if len(singleHeads) != 0 || len(singleBundles) != 1 || len(multiHeads) != 1 || len(multiBundles) != 2 {
		t.Fatalf("demands: single-host heads %v bundles %v, multi-host heads %v bundles %v; want 0 and 1, 1 and 2",
			singleHeads, singleBundles, multiHeads, multiBundles)
	}
	together := append(append([]map[string]float64{}, multiHeads...), multiBundles...)
	cases := []autoscalerCase{
		{single, [][]map[string]float64{singleBundles}},
		{withAcceleratorType(t, single, "TPU-V6E", false), [][]map[string]float64{singleBundles}},
		{multi, [][]map[string]float64{multiHeads, together}},
		{withAcceleratorType(t, multi, "TPU-V4", true), [][]map[string]float64{together}},
	}
	got := askAutoscaler(t, cases)
	type want struct {
		launch     int // nodes of the group
		infeasible int // bundles
	}
	for i, c := range []struct {
		name  string
		group string
		want  []want
	}{
		{"single-host v6e 2x4, as rendered", singleGroup, []want{{1, 0}}},
		{"single-host v6e 2x4, without accelerator_type", singleGroup, []want{{0, 1}}},
		{"multi-host v4 2x2x2, as rendered: head; head and bundles", multiGroup, []want{{1, 0}, {1, 2}}},
		{"multi-host v4 2x2x2, with accelerator_type: head and bundles", multiGroup, []want{{2, 0}}},
	} {
		t.Logf("%s: node types %v", c.name, got[i].Types)
		for j, w := range c.want {
			d := got[i].Demands[j]
			if d.Launch[c.group] != w.launch || len(d.Launch) > 1 || len(d.Infeasible) != w.infeasible {
				t.Errorf("%s: demand %v: the autoscaler launches %v and finds no node type for %v; want %d node(s) of %s and %d infeasible",
					c.name, cases[i].Demands[j], d.Launch, d.Infeasible, w.launch, c.group, w.infeasible)
			}
		}
	}
}
