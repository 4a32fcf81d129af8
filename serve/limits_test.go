package serve_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

func tpuDeployment(name string, replicas int) serve.Deployment {
	return serve.Deployment{Name: name, NumReplicas: serveconfig.ReplicaCount(replicas),
		AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "4x4"}}
}

func limitApp(ds ...serve.Deployment) serve.Application {
	return serve.Application{ImportPath: "app:app", Deployments: ds}
}

// TestHugeReplicasLimit: a replica count past its limit is a TooMany
// error at the field that set it, found before any replica's slice group
// is built. Not parallel: it measures the heap.
func TestHugeReplicasLimit(t *testing.T) {
	type tc struct {
		name string
		app  serve.Application
		want []field.Ref
	}
	var cases []tc
	for _, n := range []int{100000000, 1 << 40, 99999999999, math.MaxInt} {
		cases = append(cases,
			tc{"numReplicas with topology", limitApp(tpuDeployment("llm", n)),
				[]field.Ref{{Field: "app.deployments[llm].num_replicas", Type: field.TypeTooMany}}},
			tc{"numReplicas without topology", limitApp(serve.Deployment{Name: "web", NumReplicas: serveconfig.ReplicaCount(n)}),
				[]field.Ref{{Field: "app.deployments[web].num_replicas", Type: field.TypeTooMany}}},
			tc{"autoscaling maxReplicas", limitApp(serve.Deployment{Name: "llm", AutoscalingConfig: &serveconfig.AutoscalingConfig{MaxReplicas: n},
				AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "4x4"}}),
				[]field.Ref{{Field: "app.deployments[llm].autoscaling_config.max_replicas", Type: field.TypeTooMany}}},
			tc{"autoscaling minReplicas", limitApp(serve.Deployment{Name: "web", AutoscalingConfig: &serveconfig.AutoscalingConfig{MinReplicas: new(n), MaxReplicas: 2}}),
				[]field.Ref{{Field: "app.deployments[web].autoscaling_config.min_replicas", Type: field.TypeTooMany}}},
		)
	}
	cases = append(cases,
		// Under MaxReplicas, past the replicas that own a slice.
		tc{"slice replicas", limitApp(tpuDeployment("llm", placement.MaxSliceReplicas+1)),
			[]field.Ref{{Field: "app.deployments[llm].num_replicas", Type: field.TypeTooMany}}},
		// Each deployment within the limit, the application past it.
		tc{"slice replicas over the app", limitApp(tpuDeployment("a", 1000), tpuDeployment("b", 1000)),
			[]field.Ref{{Field: "app.deployments[b].num_replicas", Type: field.TypeTooMany}}},
		// Past the bundles: 300 replicas of 64 hosts.
		tc{"bundles", limitApp(serve.Deployment{Name: "llm", NumReplicas: serveconfig.ReplicaCount(300),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "16x16"}}),
			[]field.Ref{{Field: "app.deployments[llm].num_replicas", Type: field.TypeTooMany}}},
		tc{"deployment name", limitApp(serve.Deployment{Name: strings.Repeat("d", placement.MaxNameLength+1)}),
			[]field.Ref{{Field: "app.deployments[" + strings.Repeat("d", placement.MaxNameLength+1) + "].name", Type: field.TypeTooMany}}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloctest.Below(t, alloctest.MiB, func() { _, err = c.app.Compile() })
			if diff := cmp.Diff(c.want, field.Refs(err)); diff != "" {
				t.Errorf("Compile errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// TestSliceReplicasLimitHolds: the most replicas that may own a slice
// compile.
func TestSliceReplicasLimitHolds(t *testing.T) {
	t.Parallel()
	p, err := limitApp(tpuDeployment("a", placement.MaxSliceReplicas/2), tpuDeployment("b", placement.MaxSliceReplicas/2)).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Slices) != placement.MaxSliceReplicas {
		t.Errorf("%d slice groups, want %d", len(p.Slices), placement.MaxSliceReplicas)
	}
}

// FuzzApplicationCompile feeds large and odd replica counts to a TPU
// deployment: no panic, and a refused application allocates little. The
// seeds run with go test.
func FuzzApplicationCompile(f *testing.F) {
	f.Add("v6e", "4x4", 1, 0, 0)
	f.Add("v6e", "4x4", 100000000, 0, 0)
	f.Add("v4", "2x2x2", 0, 1<<40, 1)
	f.Add("v6e", "16x16", 300, 0, 0)
	f.Add("v6e", "2x4", math.MaxInt, math.MaxInt, math.MaxInt)
	f.Add("v6e", "4x4", -1, -1, -1)
	f.Add("v6e", "16", 2, 0, 0)
	f.Fuzz(func(t *testing.T, gen, topo string, replicas, maxReplicas, minReplicas int) {
		d := serve.Deployment{Name: "llm", NumReplicas: serveconfig.ReplicaCount(replicas),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: gen, Topology: topo}}
		if maxReplicas != 0 || minReplicas != 0 {
			d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: maxReplicas, MinReplicas: new(minReplicas)}
		}
		app := limitApp(d)
		var p *placement.Plan
		var err error
		n := alloctest.Bytes(func() { p, err = app.Compile() })
		if err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("Compile error is not a field error: %v", err)
			}
			if n >= alloctest.MiB {
				t.Fatalf("a refused application allocated %d bytes", n)
			}
			return
		}
		if len(p.Slices) > placement.MaxSliceReplicas {
			t.Fatalf("compiled %d slice groups, past MaxSliceReplicas", len(p.Slices))
		}
	})
}
