package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

func TestCompile(t *testing.T) {
	t.Parallel()
	if n := len(specCases); n < 40 {
		t.Fatalf("%d spec cases; the Ray cross-check needs at least 40", n)
	}
	for _, tc := range specCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan, err := tc.app.Compile()
			if diff := cmp.Diff(tc.want, field.Refs(err)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, err)
			}
			if tc.want != nil {
				if plan != nil {
					t.Errorf("Compile returned a plan with errors")
				}
				return
			}
			if plan.Kind != placement.KindApplication || plan.Serve == nil || plan.Serve.Config.Name != plan.Name {
				t.Fatalf("plan kind %q, serve %v", plan.Kind, plan.Serve)
			}
			again, err := tc.app.Compile()
			if err != nil {
				t.Fatal(err)
			}
			a, _ := plan.MarshalIndent()
			b, _ := again.MarshalIndent()
			if !bytes.Equal(a, b) {
				t.Errorf("two compiles differ:\n%s\n%s", a, b)
			}
			if tc.golden != "" {
				golden.Assert(t, tc.golden+".golden.json", a)
			}
			// A plan file read back, strictly as the CLI reads it, gives
			// the same plan.
			var read placement.Plan
			if errs := fieldfile.Decode(a, nil, &read); len(errs) > 0 {
				t.Fatalf("reading the plan back: %v", errs)
			}
			if c, _ := read.MarshalIndent(); !bytes.Equal(a, c) {
				t.Errorf("the plan read back differs:\n%s\n%s", a, c)
			}
		})
	}
}

// TestSliceGroups checks one slice group per replica, tagged with the
// replica's index, and the reservation the replicas read.
func TestSliceGroups(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dep  Deployment
		want int
	}{
		{"fixed", Deployment{Name: "llm", NumReplicas: serveconfig.ReplicaCount(3), AcceleratorConfig: v4Slice}, 3},
		{"default one", Deployment{Name: "llm", AcceleratorConfig: v4Slice}, 1},
		{"autoscaling max", Deployment{Name: "llm", AutoscalingConfig: &serveconfig.AutoscalingConfig{MaxReplicas: 4}, AcceleratorConfig: v4Slice}, 4},
		{"autoscaling default max", Deployment{Name: "llm", AutoscalingConfig: &serveconfig.AutoscalingConfig{}, AcceleratorConfig: v4Slice}, 1},
		{"auto default max", Deployment{Name: "llm", NumReplicas: serveconfig.AutoReplicas(), AcceleratorConfig: v4Slice}, 100},
		{"no topology", Deployment{Name: "llm", NumReplicas: serveconfig.ReplicaCount(3), AcceleratorConfig: &AcceleratorConfig{Accelerator: "v4"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan, err := Application{ImportPath: "a:b", Deployments: []Deployment{tc.dep}}.Compile()
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Slices) != tc.want {
				t.Fatalf("%d slice groups, want %d", len(plan.Slices), tc.want)
			}
			for i, g := range plan.Slices {
				want := placement.Part{Role: placement.RoleReplica, Name: "llm", Index: i}
				if g.Part != want {
					t.Errorf("group %d part %v, want %v", i, g.Part, want)
				}
				if g.Hosts() != 2 || len(g.Heads) != 1 {
					t.Errorf("group %d: %d hosts, %d heads; want a v4 2x2x2 slice", i, g.Hosts(), len(g.Heads))
				}
			}
			if len(plan.Slices) > 1 {
				// A DeepCopy is a group of its own to change.
				own := plan.Slices[0].DeepCopy()
				own.BundleResources["CPU"] = 99
				if plan.Slices[0].BundleResources["CPU"] == 99 || plan.Slices[1].BundleResources["CPU"] == 99 {
					t.Error("a DeepCopy of a replica's group shares its map")
				}
				// So is each replica's group: changing one changes no other.
				first := plan.Slices[0]
				first.BundleResources["CPU"] = 98
				first.Groups[0].Bundles[0].Resources["CPU"] = 98
				first.Heads[0].LabelSelector["zone"] = "a"
				for _, g := range plan.Slices[1:] {
					if g.BundleResources["CPU"] != 1 || g.Groups[0].Bundles[0].Resources["CPU"] != 1 || g.Heads[0].LabelSelector["zone"] != "" {
						t.Fatalf("a change to replica 0's group reached replica %d's: %v", g.Part.Index, g)
					}
				}
			}
		})
	}
}

// TestDuplicateNamesManyDeployments: duplicates are found the same way
// among a few deployments (scanned) and many (looked up).
func TestDuplicateNamesManyDeployments(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 40} {
		app := Application{ImportPath: "a:b"}
		for i := range n {
			app.Deployments = append(app.Deployments, Deployment{Name: fmt.Sprintf("d%d", i%(n-1))})
		}
		_, err := app.Compile()
		errs := field.Errors(err)
		if len(errs) != 1 {
			t.Fatalf("%d deployments: errors %v, want one duplicate", n, err)
		}
		want := fmt.Sprintf("app.deployments[%d].name", n-1)
		if errs[0].Field != want || errs[0].Type != field.TypeInvalid || errs[0].BadValue != "d0" {
			t.Errorf("%d deployments: %s %s %v, want %s Invalid d0", n, errs[0].Field, errs[0].Type, errs[0].BadValue, want)
		}
	}
}

// TestSliceShapePerCompile checks that every compile resolves its own
// slice shape: two compiles of one accelerator config share no map, a
// config that differs in any field the shape follows from gets the shape
// it describes, and errors always carry the paths of the compile that made
// them.
func TestSliceShapePerCompile(t *testing.T) {
	t.Parallel()
	compile := func(a AcceleratorConfig, strategy placement.Strategy) (*placement.SliceGroup, error) {
		t.Helper()
		plan, err := Application{ImportPath: "a:b", Deployments: []Deployment{
			{Name: "llm", AcceleratorConfig: &a, PlacementGroupStrategy: strategy},
		}}.Compile()
		if err != nil {
			return nil, err
		}
		return plan.Slices[0], nil
	}
	base := AcceleratorConfig{Kind: TPU, Accelerator: "v4", Topology: "2x2x2"}
	g1, err := compile(base, "")
	if err != nil {
		t.Fatal(err)
	}
	g2, err := compile(base, "")
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(g1.BundleResources).UnsafePointer() == reflect.ValueOf(g2.BundleResources).UnsafePointer() {
		t.Error("two compiles of one accelerator config share the shape's bundle map")
	}
	if own := g1.DeepCopy(); reflect.ValueOf(own.BundleResources).UnsafePointer() == reflect.ValueOf(g1.BundleResources).UnsafePointer() {
		t.Error("a DeepCopy shares the group's bundle map")
	}

	for _, tc := range []struct {
		name     string
		a        AcceleratorConfig
		strategy placement.Strategy
		check    func(*placement.SliceGroup) string
		want     string
	}{
		{"topology", AcceleratorConfig{Kind: TPU, Accelerator: "v4", Topology: "2x2x4"}, "", func(g *placement.SliceGroup) string {
			return fmt.Sprint(g.Topology, " ", g.HostsPerSlice)
		}, "2x2x4 4"},
		{"accelerator spelling", AcceleratorConfig{Kind: TPU, Accelerator: "TPU-V4", Topology: "2x2x2"}, "", func(g *placement.SliceGroup) string {
			return fmt.Sprint(g.AcceleratorType, " ", g.HostsPerSlice)
		}, "TPU-V4 2"},
		{"strategy", base, placement.StrictSpread, func(g *placement.SliceGroup) string {
			return string(g.Strategy)
		}, "STRICT_SPREAD"},
		{"head timeout", AcceleratorConfig{Kind: TPU, Accelerator: "v4", Topology: "2x2x2", HeadReservationTimeout: 7 * time.Second}, "", func(g *placement.SliceGroup) string {
			return fmt.Sprint(g.HeadReservationTimeoutSeconds)
		}, "7"},
	} {
		g, err := compile(tc.a, tc.strategy)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := tc.check(g); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}

	// Each compile's errors name its own deployment.
	for _, name := range []string{"first", "second"} {
		_, err := Application{ImportPath: "a:b", Deployments: []Deployment{
			{Name: "ok"},
			{Name: name, AcceleratorConfig: &AcceleratorConfig{Kind: TPU, Accelerator: "v4", Topology: "2x2x3"}},
		}}.Compile()
		want := "app.deployments[" + name + "].accelerator_config.topology"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("deployment %s: error %v, want one at %s", name, err, want)
		}
	}
}

// TestCompileConcurrent compiles apps with a few accelerator configs from
// many goroutines at once (run under -race): every plan is the one a
// compile alone makes.
func TestCompileConcurrent(t *testing.T) {
	t.Parallel()
	app := func(i int) Application {
		return Application{ImportPath: "a:b", Deployments: []Deployment{{
			Name: "llm", NumReplicas: serveconfig.ReplicaCount(2),
			AcceleratorConfig: &AcceleratorConfig{Kind: TPU, Accelerator: "v6e", Topology: "4x4",
				HeadReservationTimeout: time.Duration(1000+i%4) * time.Millisecond},
		}}}
	}
	want := make([][]byte, 4)
	for i := range want {
		plan, err := app(i).Compile()
		if err != nil {
			t.Fatal(err)
		}
		want[i] = planJSON(t, plan)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (g + i) % 4
				plan, err := app(k).Compile()
				if err != nil {
					t.Error(err)
					return
				}
				if got := planJSON(t, plan); !bytes.Equal(got, want[k]) {
					t.Errorf("goroutine %d, compile %d: plan differs from a compile alone:\n%s\nwant\n%s", g, i, got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}

func planJSON(t *testing.T, plan *placement.Plan) []byte {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
