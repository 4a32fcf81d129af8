package kuberay_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// A deployment whose replicas ask for TPU without a topology owns no slice,
// but its replicas still need TPU hosts: the RayService gets a worker group
// of the smallest single-host slice of its generation that holds one
// replica for each host it starts with, each a group of its own (one
// slice, not a multislice job).
func TestRenderServiceHostsForTPUWithoutTopology(t *testing.T) {
	t.Parallel()
	app := serve.Application{Name: "embed", ImportPath: "embed:app", Deployments: []serve.Deployment{
		{Name: "Router", NumReplicas: serveconfig.ReplicaCount(1)},
		{Name: "Embed", NumReplicas: serveconfig.ReplicaCount(3), AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e"},
			RayActorOptions: &serve.RayActorOptions{Resources: map[string]float64{"TPU": 4}}},
	}}
	svc, err := kuberay.RenderService(compileApp(t, app), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups := svc.Spec.RayClusterSpec.WorkerGroupSpecs
	if len(groups) != 3 {
		t.Fatalf("%d worker groups, want 3 for Embed's replicas", len(groups))
	}
	for i, g := range groups {
		if want := "v6e-4-" + strconv.Itoa(i); *g.GroupName != want || *g.Replicas != 1 || *g.MinReplicas != 1 || *g.MaxReplicas != 1 || *g.NumOfHosts != 1 {
			t.Errorf("group %s: replicas %d (%d..%d) of %d hosts; want %s, one single-host slice", *g.GroupName, *g.Replicas, *g.MinReplicas, *g.MaxReplicas, *g.NumOfHosts, want)
		}
		c := g.Template.Spec.Containers[0]
		if got := c.Resources.Limits.Name("google.com/tpu", "").Value(); got != 4 {
			t.Errorf("google.com/tpu limit %d, want 4", got)
		}
		if sel := g.Template.Spec.NodeSelector; sel["cloud.google.com/gke-tpu-topology"] != "2x2" || sel["cloud.google.com/gke-tpu-accelerator"] != "tpu-v6e-slice" {
			t.Errorf("node selector %v, want a v6e 2x2 node pool", sel)
		}
	}
}

func TestRenderServiceHostsRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		d     serve.Deployment
		field string
		says  string
	}{
		"no generation": {serve.Deployment{Name: "E", RayActorOptions: &serve.RayActorOptions{Resources: map[string]float64{"TPU": 1}}},
			"plan.serve.config.deployments[E].ray_actor_options.accelerator_type", "KubeRay needs its TPU generation"},
		"more chips than a host": {serve.Deployment{Name: "E", AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4"},
			RayActorOptions: &serve.RayActorOptions{Resources: map[string]float64{"TPU": 8}}},
			"plan.serve.config.deployments[E].ray_actor_options.resources[TPU]", "2x2x1 (4 chips)"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := serve.Application{Name: "a", ImportPath: "m:app", Deployments: []serve.Deployment{c.d}}.Compile()
			if err != nil {
				t.Fatal(err)
			}
			_, err = kuberay.RenderService(p, kuberay.Options{})
			errs := field.Errors(err)
			if len(errs) != 1 || errs[0].Field != c.field || !strings.Contains(errs[0].Error(), c.says) {
				t.Errorf("err = %v; want one error at %s saying %q", err, c.field, c.says)
			}
		})
	}
}
