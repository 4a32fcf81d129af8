package tpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// verdict says which rule sets accept a shape.
type verdict int

const (
	neither verdict = iota
	rayOnly
	gkeOnly
	both
	wrongRank // well-formed, but the generation's torus has the other rank
	malformed // ParseTopology rejects it
)

func (v verdict) ray() bool { return v == rayOnly || v == both }
func (v verdict) gke() bool { return v == gkeOnly || v == both }

type shapeCase struct {
	gen, topo string
	v         verdict
}

// shapeCases lists, per generation, the shapes each rule set accepts and
// rejects: Ray's VALID_TPU_TOPOLOGY as installed (Ray 2.60) and the Google
// Cloud / GKE rules of tpu-catalog.md.
var shapeCases = []shapeCase{
	// v2: GKE's single-host 2x2 is not in Ray's table; Ray's 4x8 is not documented.
	{"v2", "2x2", gkeOnly},
	{"v2", "4x4", both},
	{"v2", "4x8", rayOnly},
	{"v2", "8x8", both},
	{"v2", "8x16", both},
	{"v2", "16x16", both},
	{"v2", "16x32", neither},
	{"v2", "1x1", neither},
	{"v2", "2x4", neither},
	{"v2", "8x4", neither},
	{"v2", "2x2x1", wrongRank},

	{"v3", "2x2", gkeOnly},
	{"v3", "4x4", both},
	{"v3", "4x8", both},
	{"v3", "8x8", both},
	{"v3", "8x16", both},
	{"v3", "16x16", both},
	{"v3", "16x32", both},
	{"v3", "32x32", both},
	{"v3", "32x64", neither},
	{"v3", "2x8", neither},
	{"v3", "1x1", neither},
	{"v3", "2x2x2", wrongRank},

	{"v4", "2x2x1", both},
	{"v4", "2x2x2", both},
	{"v4", "2x2x4", both},
	{"v4", "2x4x4", both},
	{"v4", "4x4x4", both},
	{"v4", "4x4x8", both},
	{"v4", "4x8x4", both}, // v4 accepts any order on both sides
	{"v4", "4x8x8", both},
	{"v4", "8x8x8", both},
	{"v4", "12x12x16", both},    // Ray's largest v4 shape
	{"v4", "4x4x16", both},      //
	{"v4", "8x16x16", gkeOnly},  // documented, beyond Ray's 12x12x16 bound
	{"v4", "16x16x16", gkeOnly}, // the full v4 pod
	{"v4", "16x4x4", gkeOnly},   // Ray's x bound is 12
	{"v4", "12x12x20", gkeOnly}, // Ray's z bound is 16
	{"v4", "16x16x20", neither}, // 80 cubes > 64
	{"v4", "1x1x1", neither},
	{"v4", "2x2x3", neither},
	{"v4", "1x2x2", neither},
	{"v4", "2x4x2", neither},
	{"v4", "4x4x6", neither},
	{"v4", "4x4", wrongRank},
	{"v4", "2x2", wrongRank},

	{"v5e", "1x1", both},
	{"v5e", "2x2", both},
	{"v5e", "2x4", both},
	{"v5e", "2x8", rayOnly},
	{"v5e", "4x4", both},
	{"v5e", "4x8", both},
	{"v5e", "8x8", both},
	{"v5e", "8x16", both},
	{"v5e", "16x16", both},
	{"v5e", "4x2", neither},
	{"v5e", "1x2", neither},
	{"v5e", "3x3", neither},
	{"v5e", "16x32", neither},
	{"v5e", "2x2x1", wrongRank},

	{"v5p", "2x2x1", both},
	{"v5p", "2x2x2", both},
	{"v5p", "2x2x4", both},
	{"v5p", "2x4x4", both},
	{"v5p", "4x4x4", both},
	{"v5p", "4x4x16", both},
	{"v5p", "8x16x20", both},
	{"v5p", "16x16x24", both},    // Ray's largest v5p shape, 96 cubes
	{"v5p", "16x4x4", rayOnly},   // unsorted: Ray lists every order, GKE wants A <= B <= C
	{"v5p", "4x16x4", rayOnly},   //
	{"v5p", "12x20x20", gkeOnly}, // beyond Ray's y bound of 16
	{"v5p", "16x20x20", neither}, // 100 cubes > 96
	{"v5p", "16x16x28", neither}, // 112 cubes > 96
	{"v5p", "24x4x4", neither},   // unsorted and beyond Ray's x bound
	{"v5p", "2x2x3", neither},
	{"v5p", "4x4", wrongRank},

	{"v6e", "1x1", both},
	{"v6e", "2x2", both},
	{"v6e", "2x4", both},
	{"v6e", "2x8", rayOnly},
	{"v6e", "4x4", both},
	{"v6e", " 4X4 ", both},
	{"v6e", "4x8", both},
	{"v6e", "8x8", both},
	{"v6e", "8x16", both},
	{"v6e", "16x16", both},
	{"v6e", "8x2", neither},
	{"v6e", "4x2", neither},
	{"v6e", "32x32", neither},
	{"v6e", "2x2x2", wrongRank},
	{"v6e", "4x", malformed},
	{"v6e", "x4", malformed},
	{"v6e", "0x4", malformed},
	{"v6e", "4x4x4x4", malformed},
	{"v6e", "-1x4", malformed},
	{"v6e", "4 x 4", malformed},

	{"v7x", "1x1x1", gkeOnly},
	{"v7x", "2x2x1", both},
	{"v7x", "2x2x2", both},
	{"v7x", "2x2x4", both},
	{"v7x", "2x4x4", both},
	{"v7x", "4x4x4", both},
	{"v7x", "4x4x8", both},
	{"v7x", "4x8x8", both},
	{"v7x", "8x8x8", both},
	{"v7x", "8x8x16", both},
	{"v7x", "8x16x16", both},
	{"v7x", "4x4x12", gkeOnly},   // Ray lists only its ten v7x shapes
	{"v7x", "12x12x12", gkeOnly}, //
	{"v7x", "16x16x16", gkeOnly}, //
	{"v7x", "16x24x24", gkeOnly}, // 144 cubes, the v7x maximum
	{"v7x", "24x24x24", neither}, // 216 cubes
	{"v7x", "8x8x4", neither},    // unsorted
	{"v7x", "4x8x4", neither},
	{"v7x", "2x2x3", neither},
	{"v7x", "4x4", wrongRank},
	{"v7x", "4x", malformed},
	{"v7x", "4x4x4x4", malformed},
}

func TestCheckTopology(t *testing.T) {
	t.Parallel()
	for _, tc := range shapeCases {
		if tc.v == malformed {
			continue
		}
		t.Run(tc.gen+"/"+tc.topo, func(t *testing.T) {
			t.Parallel()
			g := mustGen(t, tc.gen)
			topo := tpu.MustParseTopology(tc.topo)
			type verdicts struct{ Ray, GKE, Any bool }
			want := verdicts{tc.v.ray(), tc.v.gke(), tc.v.ray() || tc.v.gke()}
			got := verdicts{
				g.CheckTopology(topo, tpu.TargetRay) == "",
				g.CheckTopology(topo, tpu.TargetGKE) == "",
				g.CheckTopology(topo, tpu.TargetAny) == "",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CheckTopology verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveShapes resolves every shape under each target and checks the
// verdict, the error's path and type, and the cross-target explanation.
func TestResolveShapes(t *testing.T) {
	t.Parallel()
	fields := tpu.FieldsUnder(field.NewPath("slice"))
	for _, tc := range shapeCases {
		for _, target := range []tpu.Target{tpu.TargetRay, tpu.TargetGKE, tpu.TargetAny} {
			name := tc.gen + "/" + tc.topo + "/" + string(target)
			if target == tpu.TargetAny {
				name += "any"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sl, errs := tpu.SliceSpec{Generation: tc.gen, Topology: tc.topo}.Resolve(target, fields)

				var ok bool
				var wantType field.Type
				switch tc.v {
				case malformed, wrongRank:
					wantType = field.TypeInvalid
				default:
					wantType = field.TypeNotSupported
					switch target {
					case tpu.TargetRay:
						ok = tc.v.ray()
					case tpu.TargetGKE:
						ok = tc.v.gke()
					default:
						ok = tc.v.ray() || tc.v.gke()
					}
				}
				if ok {
					if errs != nil {
						t.Fatalf("Resolve: %v", errs)
					}
					if diff := cmp.Diff([2]bool{tc.v.ray(), tc.v.gke()}, [2]bool{sl.RayValid, sl.GKEValid}); diff != "" {
						t.Errorf("[RayValid GKEValid] (-want +got):\n%s", diff)
					}
					if got, want := sl.Topology.String(), tpu.MustParseTopology(tc.topo).String(); got != want {
						t.Errorf("Topology = %s, want %s", got, want)
					}
					if sl.Hosts()*sl.ChipsPerHost != sl.Chips() {
						t.Errorf("Hosts %d x ChipsPerHost %d != Chips %d", sl.Hosts(), sl.ChipsPerHost, sl.Chips())
					}
					return
				}
				if sl != nil {
					t.Errorf("Resolve returned a slice with its errors")
				}
				if diff := cmp.Diff([]ref{{"slice.topology", wantType}}, refs(errs)); diff != "" {
					t.Fatalf("errors (-want +got):\n%s", diff)
				}
				e := errs[0]
				if e.BadValue != tc.topo {
					t.Errorf("BadValue = %#v, want the raw string %q", e.BadValue, tc.topo)
				}
				if e.Detail == "" {
					t.Errorf("Detail is empty")
				}
				if wantType != field.TypeNotSupported {
					return
				}
				g := mustGen(t, tc.gen)
				if diff := cmp.Diff(g.ValidTopologies(target), e.ValidValues); diff != "" {
					t.Errorf("ValidValues != ValidTopologies(%q) (-want +got):\n%s", target, diff)
				}
				if e.Suggestion != "" && !slices.Contains(e.ValidValues, e.Suggestion) {
					t.Errorf("Suggestion %q is not a valid value", e.Suggestion)
				}
				// A shape the other rule set accepts gets the cross-target
				// explanation instead of this target's plain reason.
				topo := tpu.MustParseTopology(tc.topo)
				plain := g.CheckTopology(topo, target)
				otherValid := target == tpu.TargetRay && tc.v.gke() || target == tpu.TargetGKE && tc.v.ray()
				if otherValid && e.Detail == plain {
					t.Errorf("Detail %q is the plain %s reason; want the note that the other rule set accepts %s", e.Detail, target, tc.topo)
				}
				if !otherValid && e.Detail != plain {
					t.Errorf("Detail = %q, want CheckTopology's reason %q", e.Detail, plain)
				}
			})
		}
	}
}

// TestResolveTopologyErrors pins the full error for the shapes the brief
// names: path, type, bad value, suggestion, and whether the detail is the
// cross-target note.
func TestResolveTopologyErrors(t *testing.T) {
	t.Parallel()
	p := tpu.FieldsUnder(field.NewPath("train", "scaling"))
	tests := []struct {
		name       string
		spec       tpu.SliceSpec
		target     tpu.Target
		want       ref
		suggestion string
		crossNote  bool // the detail says the other rule set accepts the shape
	}{
		{"v4 8x16x16 under Ray", tpu.SliceSpec{Generation: "v4", Topology: "8x16x16"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "8x12x16", true},
		{"v6e 2x8 under GKE", tpu.SliceSpec{Generation: "v6e", Topology: "2x8"}, tpu.TargetGKE,
			ref{"train.scaling.topology", field.TypeNotSupported}, "4x4", true}, // same 16 chips
		{"v2 2x2 under Ray", tpu.SliceSpec{Generation: "v2", Topology: "2x2"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "", true},
		{"v5p 16x4x4 under GKE", tpu.SliceSpec{Generation: "v5p", Topology: "16x4x4"}, tpu.TargetGKE,
			ref{"train.scaling.topology", field.TypeNotSupported}, "4x4x16", true}, // sorted order
		{"v7x 1x1x1 under Ray", tpu.SliceSpec{Generation: "v7x", Topology: "1x1x1"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "", true},
		{"v6e 4x2 transposed", tpu.SliceSpec{Generation: "v6e", Topology: "4x2"}, tpu.TargetAny,
			ref{"train.scaling.topology", field.TypeNotSupported}, "2x4", false},
		{"v6e 8x2 transposed under Ray", tpu.SliceSpec{Generation: "v6e", Topology: "8x2"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "2x8", false},
		{"v6e 1x16 same chips", tpu.SliceSpec{Generation: "v6e", Topology: "1x16"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "4x4", false},
		{"v4 2x1x2 permuted sub-cube", tpu.SliceSpec{Generation: "v4", Topology: "2x1x2"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeNotSupported}, "2x2x1", false},
		{"v7x 8x8x4 unsorted", tpu.SliceSpec{Generation: "v7x", Topology: "8x8x4"}, tpu.TargetGKE,
			ref{"train.scaling.topology", field.TypeNotSupported}, "4x8x8", false},
		{"v6e 4x5 typo", tpu.SliceSpec{Generation: "v6e", Topology: "4x5"}, tpu.TargetAny,
			ref{"train.scaling.topology", field.TypeNotSupported}, "4x4", false},
		{"v4 4x4 rank", tpu.SliceSpec{Generation: "v4", Topology: "4x4"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeInvalid}, "", false},
		{"v6e 4x malformed", tpu.SliceSpec{Generation: "v6e", Topology: "4x"}, tpu.TargetRay,
			ref{"train.scaling.topology", field.TypeInvalid}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := tt.spec.Resolve(tt.target, p)
			err := errs.Err()
			var fe *field.Error
			if !errors.As(err, &fe) {
				t.Fatalf("errors.As(%v, *field.Error) = false", err)
			}
			if diff := cmp.Diff(tt.want, ref{fe.Field, fe.Type}); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if fe.BadValue != tt.spec.Topology {
				t.Errorf("BadValue = %#v, want %q", fe.BadValue, tt.spec.Topology)
			}
			if fe.Suggestion != tt.suggestion {
				t.Errorf("Suggestion = %q, want %q", fe.Suggestion, tt.suggestion)
			}
			g := mustGen(t, tt.spec.Generation)
			if topo, perr := tpu.ParseTopology(tt.spec.Topology); perr == nil {
				plain := g.CheckTopology(topo, tt.target)
				if got := fe.Detail != plain; got != tt.crossNote {
					t.Errorf("Detail %q: cross-target note = %v, want %v", fe.Detail, got, tt.crossNote)
				}
			}
			// The resolved verdicts under TargetAny agree with the note.
			if tt.crossNote {
				sl, errs := tt.spec.Resolve(tpu.TargetAny, p)
				if errs != nil {
					t.Fatalf("Resolve(TargetAny): %v", errs)
				}
				if sl.RayValid == sl.GKEValid {
					t.Errorf("RayValid = GKEValid = %v, want exactly one rule set to accept %s", sl.RayValid, tt.spec.Topology)
				}
			}
		})
	}
}
