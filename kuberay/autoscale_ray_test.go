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

// askAutoscaler runs demand.py in the project virtualenv on each cluster
// (a rendered RayCluster, as the API server stores it) with its demands.
func askAutoscaler(t *testing.T, clusters []map[string]any, demands [][]map[string]float64) []autoscalerDemands {
	t.Helper()
	type caseIn struct {
		Cluster map[string]any       `json:"cluster"`
		Demands []map[string]float64 `json:"demands"`
	}
	var in struct {
		Cases []caseIn `json:"cases"`
	}
	for i, c := range clusters {
		in.Cases = append(in.Cases, caseIn{c, demands[i]})
	}
	req, err := json.Marshal(in)
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
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != len(clusters) {
		t.Fatalf("demand.py printed %.500s (%v), want %d results", out, err, len(clusters))
	}
	return res.Results
}

// Ray's v1 autoscaler, run on raytpu's autoscaled RayClusters through its
// own code (the node types it derives from a RayCluster under KubeRay and
// its scheduler's choice of nodes to add), finds a node type for every
// demand a JaxTrainer's slice plan makes: a single-host slice's bundle,
// and a multi-host slice's head reservation and bundles. A bundle asks for
// accelerator_type:TPU-<GEN> (0.001, Ray Train's and
// slice_placement_group's accelerator constraint), which Ray sets on
// every TPU host but KubeRay's autoscaling config derives from nothing in
// a group's spec: the node types know it only because raytpu renders it
// in each autoscaled TPU group's resources. Without it (the last cases) the autoscaler finds no
// node type for either bundle and logs "could not find a node type to
// satisfy the request" every round: a multi-host slice still scales on
// its head reservation, but a single-host slice, which has none, never
// leaves zero.
func TestAutoscalerFindsANodeTypeForEveryDemand(t *testing.T) {
	t.Parallel()
	var clusters []map[string]any
	var demands [][]map[string]float64
	var groups []string
	for _, shape := range []placement.SliceSpec{{Accelerator: "v6e", Topology: "2x4"}, {Accelerator: "v4", Topology: "2x2x2"}} {
		g, err := shape.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		// The cluster is a RayCluster of that slice shape, autoscaled.
		rc, err := kuberay.RenderCluster(placement.NewSlicePlan("scaled", g), kuberay.Options{Autoscaling: &kuberay.Autoscaling{MaxSlices: 2}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, obj)
		// The demands are a JaxTrainer's on that slice shape: its slice
		// group's head reservations and bundles.
		jg := compile(t, trainer(shape.Accelerator, shape.Topology, 1)).Slices[0]
		var d []map[string]float64
		for _, h := range jg.Heads {
			d = append(d, h.Resources)
		}
		d = append(d, jg.BundleResources)
		demands = append(demands, d)
		groups = append(groups, *rc.Spec.WorkerGroupSpecs[0].GroupName)
	}
	if len(demands[0]) != 1 || len(demands[1]) != 2 {
		t.Fatalf("demands %v: want the single-host slice's bundle, and the multi-host slice's head then bundle", demands)
	}
	// Both clusters again, without accelerator_type in their groups'
	// resources, asked for the bundles alone.
	for i, accel := range []string{"TPU-V6E", "TPU-V4"} {
		bare := cloneJSON(t, clusters[i])
		wg := bare["spec"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)
		res := wg["resources"].(map[string]any)
		delete(res, rayvocab.AcceleratorTypeResource(accel))
		if len(res) == 0 {
			delete(wg, "resources")
		}
		clusters = append(clusters, bare)
		demands = append(demands, demands[i][len(demands[i])-1:])
	}

	got := askAutoscaler(t, clusters, demands)
	for i, name := range []string{"single-host v6e 2x4", "multi-host v4 2x2x2"} {
		t.Logf("%s: node types %v, demands %v", name, got[i].Types, demands[i])
		for j, d := range got[i].Demands {
			if len(d.Infeasible) != 0 || d.Launch[groups[i]] != 1 || len(d.Launch) != 1 {
				t.Errorf("%s: demand %v: the autoscaler launches %v, finds no node type for %v; want one node of group %s",
					name, demands[i][j], d.Launch, d.Infeasible, groups[i])
			}
		}
	}
	for i := 2; i < 4; i++ {
		if d := got[i].Demands[0]; len(d.Infeasible) != 1 || len(d.Launch) != 0 {
			t.Errorf("without accelerator_type in the group's resources (node types %v), the autoscaler launches %v for %v; want no node type found",
				got[i].Types, d.Launch, demands[i][0])
		}
	}
}

func cloneJSON(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
