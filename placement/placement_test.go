package placement_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
)

func TestCompileGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec placement.SliceSpec
	}{
		{"v6e-4x4", placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}},
		{"v6e-4x4-per-chip", placement.SliceSpec{Topology: "4x4", Accelerator: "TPU-V6E", ResourcesPerBundle: map[string]float64{"TPU": 1}}},
		{"v4-2x2x2-two-slices", placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, Name: "train"}},
		{"v4-2x2x2-pg-per-slice", placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, PGPerSlice: true, Name: "train"}},
		{"v6e-2x4-single-host", placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", Strategy: placement.StrictPack}},
		{"v6e-2x4-two-vms", placement.SliceSpec{Topology: "2x4", Accelerator: "v6e", ChipsPerHost: 4}},
		{"v7x-2x2x2-per-device", placement.SliceSpec{Topology: "2x2x2", Accelerator: "tpu7x", TPUResourcePerChip: 2, HeadReservationTimeout: -1}},
		{"v5e-4x4-user-slice-name", placement.SliceSpec{Topology: "4x4", Accelerator: "v5litepod", BundleLabelSelector: []map[string]string{
			{"zone": "a"}, {"ray.io/tpu-slice-name": "mine"}, {}, {},
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, err := c.spec.Compile(nil)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			b, err := placement.NewSlicePlan(c.name, g).MarshalIndent()
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, c.name+".golden.json", b)
			again, _ := c.spec.Compile(nil)
			b2, _ := placement.NewSlicePlan(c.name, again).MarshalIndent()
			if string(b) != string(b2) {
				t.Errorf("two compilations differ")
			}
		})
	}
}

func TestCompileShape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                                string
		spec                                placement.SliceSpec
		bundles, hosts, heads, groups, mega int
		tpu                                 float64
	}{
		{"v6e 4x4 default", placement.SliceSpec{Topology: "4x4", Accelerator: "v6e"}, 4, 4, 1, 1, 0, 4},
		{"v6e 4x4 per chip", placement.SliceSpec{Topology: "4x4", Accelerator: "v6e", ResourcesPerBundle: map[string]float64{"TPU": 1}}, 16, 4, 1, 1, 0, 1},
		{"v6e 2x2 single host", placement.SliceSpec{Topology: "2x2", Accelerator: "v6e"}, 1, 1, 0, 1, 0, 4},
		{"v4 2x2x2 x2", placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2}, 4, 4, 2, 1, 2, 4},
		{"v4 2x2x2 x3 per slice", placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 3, PGPerSlice: true}, 6, 6, 3, 3, 3, 4},
		{"v7x 2x2x2 2 per chip", placement.SliceSpec{Topology: "2x2x2", Accelerator: "v7x", TPUResourcePerChip: 2}, 2, 2, 1, 1, 0, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, err := c.spec.Compile(nil)
			if err != nil {
				t.Fatal(err)
			}
			got := []int{len(g.Bundles()), g.Hosts(), len(g.Heads), len(g.Groups), len(g.Megascale)}
			want := []int{c.bundles, c.hosts, c.heads, c.groups, c.mega}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("bundles, hosts, heads, groups, megascale (-want +got):\n%s", diff)
			}
			if got := g.BundleResources["TPU"]; got != c.tpu {
				t.Errorf("TPU per bundle = %v, want %v", got, c.tpu)
			}
			if got := g.BundleResources["CPU"]; got != 1 {
				t.Errorf("CPU per bundle = %v, want 1", got)
			}
		})
	}
}

type wantErr struct {
	Field string
	Type  field.Type
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec placement.SliceSpec
		want []wantErr
	}{
		{"empty", placement.SliceSpec{}, []wantErr{{"accelerator", field.TypeRequired}, {"topology", field.TypeRequired}}},
		{"unknown generation", placement.SliceSpec{Accelerator: "v9", Topology: "4x4"}, []wantErr{{"accelerator", field.TypeNotSupported}}},
		{"gke only topology", placement.SliceSpec{Accelerator: "v4", Topology: "8x16x16"}, []wantErr{{"topology", field.TypeNotSupported}}},
		{"indivisible bundle", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 3}}, []wantErr{{"resourcesPerBundle[TPU]", field.TypeInvalid}}},
		{"TPU per worker not 1 2 4 8", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 16}}, []wantErr{{"resourcesPerBundle[TPU]", field.TypeNotSupported}}},
		{"zero TPU", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", ResourcesPerBundle: map[string]float64{"TPU": 0}}, []wantErr{{"resourcesPerBundle[TPU]", field.TypeInvalid}}},
		{"every problem at once", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", Strategy: "SPRED", NumSlices: -1, TPUResourcePerChip: -2}, []wantErr{
			{"numSlices", field.TypeInvalid}, {"tpuResourcePerChip", field.TypeInvalid}, {"strategy", field.TypeNotSupported}}},
		{"selector length", placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", BundleLabelSelector: []map[string]string{{}}}, []wantErr{{"bundleLabelSelector", field.TypeInvalid}}},
		{"chips per host not offered", placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", ChipsPerHost: 8}, []wantErr{{"chipsPerHost", field.TypeNotSupported}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.spec.Compile(nil)
			if err == nil {
				t.Fatal("Compile succeeded, want errors")
			}
			var list field.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not a field.ErrorList", err)
			}
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

func TestMegascaleEnv(t *testing.T) {
	t.Parallel()
	g, err := placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Megascale[1].Env("10.0.0.1")
	want := map[string]string{
		"MEGASCALE_COORDINATOR_ADDRESS": "10.0.0.1",
		"MEGASCALE_PORT":                "8081",
		"MEGASCALE_NUM_SLICES":          "2",
		"MEGASCALE_SLICE_ID":            "1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// Groups built from one shape share no map; DeepCopy gives a
// group equal to the original that shares nothing with it, whatever its
// shape (one slice, several, a group per slice, user label selectors).
func TestDeepCopy(t *testing.T) {
	t.Parallel()
	for _, spec := range []placement.SliceSpec{
		{Topology: "2x2x2", Accelerator: "v4"},
		{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, PGPerSlice: true, Name: "train"},
		{Topology: "4x4", Accelerator: "v5litepod", BundleLabelSelector: []map[string]string{{"zone": "a"}, {}, {}, {}}},
	} {
		sh, errs := spec.Resolve(placement.Fields{})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		a, _ := sh.Group(max(spec.NumSlices, 1))
		b, _ := sh.Group(max(spec.NumSlices, 1))
		if a.BundleResources["CPU"] != 1 || b.BundleResources["CPU"] != 1 {
			t.Fatalf("%s: bundle CPU %v and %v, want 1", spec.Topology, a.BundleResources, b.BundleResources)
		}
		c := a.DeepCopy()
		if diff := cmp.Diff(a, c); diff != "" {
			t.Fatalf("%s: DeepCopy differs (-orig +copy):\n%s", spec.Topology, diff)
		}
		// Every map and slice of the copy is its own.
		c.BundleResources["CPU"] = 7
		for gi := range c.Groups {
			for bi := range c.Groups[gi].Bundles {
				bu := &c.Groups[gi].Bundles[bi]
				bu.Resources["CPU"] = 7
				bu.Index = 99
				if bu.LabelSelector != nil {
					bu.LabelSelector["zone"] = "changed"
				}
			}
		}
		for hi := range c.Heads {
			c.Heads[hi].Resources["x"] = 1
			c.Heads[hi].LabelSelector["x"] = "y"
		}
		for mi := range c.Megascale {
			c.Megascale[mi].Port = 1
		}
		for _, g := range []*placement.SliceGroup{a, b} {
			if g.BundleResources["CPU"] != 1 {
				t.Errorf("%s: a change to the copy reached the original's bundle resources", spec.Topology)
			}
			for _, grp := range g.Groups {
				for _, bu := range grp.Bundles {
					if bu.Resources["CPU"] != 1 || bu.Index == 99 || bu.LabelSelector["zone"] == "changed" {
						t.Errorf("%s: a change to the copy reached an original bundle: %+v", spec.Topology, bu)
					}
				}
			}
			for _, h := range g.Heads {
				if _, ok := h.Resources["x"]; ok || h.LabelSelector["x"] != "" {
					t.Errorf("%s: a change to the copy reached an original head reservation", spec.Topology)
				}
			}
			for _, m := range g.Megascale {
				if m.Port == 1 {
					t.Errorf("%s: a change to the copy reached the original's megascale", spec.Topology)
				}
			}
		}
	}
	if (*placement.SliceGroup)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
}
