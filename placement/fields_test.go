package placement_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Every error of a slice spec lands on the caller's path for that field.
func TestCompileFieldsPaths(t *testing.T) {
	t.Parallel()
	p := field.NewPath("trainer", "scaling")
	f := placement.FieldsUnder(p)
	f.Strategy = p.Child("placementStrategy")
	f.ResourcesPerBundle = p.Child("resourcesPerWorker")
	f.NumSlices = p.Child("numReplicas")
	cases := []struct {
		name string
		spec placement.SliceSpec
		want []wantErr
	}{
		{"declarative rules", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", Strategy: "PACKED", NumSlices: -1,
			ResourcesPerBundle: map[string]float64{"TPU": 4, "memory": -1, "CPU": -2}}, []wantErr{
			{"trainer.scaling.resourcesPerWorker[CPU]", field.TypeInvalid},
			{"trainer.scaling.resourcesPerWorker[memory]", field.TypeInvalid},
			{"trainer.scaling.numReplicas", field.TypeInvalid},
			{"trainer.scaling.placementStrategy", field.TypeNotSupported},
		}},
		{"catalog rules", placement.SliceSpec{Accelerator: "v6", Topology: "4x4"}, []wantErr{
			{"trainer.scaling.accelerator", field.TypeNotSupported},
		}},
		{"bundle against slice", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", Strategy: "PACKED",
			ResourcesPerBundle: map[string]float64{"TPU": 3}}, []wantErr{
			{"trainer.scaling.placementStrategy", field.TypeNotSupported},
			{"trainer.scaling.resourcesPerWorker[TPU]", field.TypeInvalid},
		}},
		{"zero TPU", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 0}}, []wantErr{
			{"trainer.scaling.resourcesPerWorker[TPU]", field.TypeInvalid},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.spec.CompileFields(f)
			var got []wantErr
			for _, e := range field.Errors(err) {
				got = append(got, wantErr{e.Field, e.Type})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// Resolve then Group gives the same group as Compile, for any slice count.
func TestResolveGroupMatchesCompile(t *testing.T) {
	t.Parallel()
	spec := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", Name: "train", PGPerSlice: true}
	shape, errs := spec.Resolve(placement.FieldsUnder(nil))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for n := 1; n <= 3; n++ {
		got, errs := shape.Group(n)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		spec.NumSlices = n
		want, err := spec.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d slices (-Compile +Resolve/Group):\n%s", n, diff)
		}
	}
	if _, errs := shape.Group(0); len(errs) != 1 || errs[0].Type != field.TypeInvalid || errs[0].Field != "numSlices" {
		t.Errorf("Group(0) = %v, want one Invalid numSlices", errs)
	}
}
