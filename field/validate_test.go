package field_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
)

type mode string

type inner struct {
	NumToKeep  int    `validate:"gte=0"`
	ScoreOrder string `validate:"omitempty,oneof=max min"`
}

type spec struct {
	Name      string             `validate:"notblank,excludesall=/\\" detail-notblank:"a name"`
	UseGPU    int                `validate:"gte=-1" detail:"-1 means forever"`
	Mode      mode               `json:"strategy,omitempty" validate:"omitempty,oneof=PACK SPREAD"`
	Resources map[string]float64 `validate:"dive,gte=0"`
	Labels    map[string]string  `validate:"dive,notblank"`
	Inner     inner
}

func TestValidateStruct(t *testing.T) {
	t.Parallel()
	root := field.NewPath("svc")
	cases := []struct {
		name string
		spec spec
		want []field.Ref
	}{
		{"valid", spec{Name: "a", Mode: "PACK", Resources: map[string]float64{"CPU": 1}}, nil},
		{"zero value but name", spec{Name: "a"}, nil},
		{"blank name", spec{Name: "  "}, []field.Ref{{"svc.name", field.TypeRequired}}},
		{"path separator", spec{Name: "a/b"}, []field.Ref{{"svc.name", field.TypeInvalid}}},
		{"everything", spec{
			UseGPU:    -2,
			Mode:      "PACKED",
			Resources: map[string]float64{"z": -1, "a": -2, "m": 1, "b": -3},
			Labels:    map[string]string{"ray.io/tpu-slice-name": " "},
			Inner:     inner{NumToKeep: -1, ScoreOrder: "mx"},
		}, []field.Ref{
			{"svc.name", field.TypeRequired},
			{"svc.useGPU", field.TypeInvalid},
			{"svc.strategy", field.TypeNotSupported},
			{"svc.resources[a]", field.TypeInvalid},
			{"svc.resources[b]", field.TypeInvalid},
			{"svc.resources[z]", field.TypeInvalid},
			{"svc.labels[ray.io/tpu-slice-name]", field.TypeRequired},
			{"svc.inner.numToKeep", field.TypeInvalid},
			{"svc.inner.scoreOrder", field.TypeNotSupported},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := field.Refs(field.ValidateStruct(root, &c.spec).Err())
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateStructValues(t *testing.T) {
	t.Parallel()
	errs := field.ValidateStruct(nil, &spec{Name: "a/", UseGPU: -5, Mode: "SPRED"})
	want := []*field.Error{
		{Type: field.TypeInvalid, Field: "name", BadValue: "a/", Detail: `must not contain any of "/\\"`},
		{Type: field.TypeInvalid, Field: "useGPU", BadValue: -5, Detail: "-1 means forever"},
		{Type: field.TypeNotSupported, Field: "strategy", BadValue: "SPRED", ValidValues: []string{"PACK", "SPREAD"}, Suggestion: "SPREAD"},
	}
	if diff := cmp.Diff(want, []*field.Error(errs)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateStructRuleDetail(t *testing.T) {
	t.Parallel()
	errs := field.ValidateStruct(nil, &spec{Name: " "})
	if len(errs) != 1 || errs[0].Type != field.TypeRequired || errs[0].Detail != "a name" {
		t.Errorf("errors = %#v, want one Required with the notblank detail", errs)
	}
}

func TestValidateStructAt(t *testing.T) {
	t.Parallel()
	// A caller that names the struct's "strategy" its "placementStrategy".
	at := func(name string) *field.Path {
		if name == "strategy" {
			name = "placementStrategy"
		}
		return field.NewPath("trainer", "scaling").Child(name)
	}
	got := field.Refs(field.ValidateStructAt(&spec{Name: "a", Mode: "X"}, at).Err())
	want := []field.Ref{{"trainer.scaling.placementStrategy", field.TypeNotSupported}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLowerCamel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"NumToKeep": "numToKeep", "UseGPU": "useGPU", "TPUResourcePerChip": "tpuResourcePerChip",
		"ID": "id", "name": "name", "X": "x", "": "",
	} {
		if got := field.LowerCamel(in); got != want {
			t.Errorf("LowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
}

// The errors of one map's entries come back ordered by key, run after run,
// also when keys hold brackets or dots (validator visits a map in Go's
// random order).
func TestValidateStructMapOrder(t *testing.T) {
	t.Parallel()
	s := spec{
		Name:      "a",
		Resources: map[string]float64{"z[1": -1, "a[b": -1, "m.n": -1, "b": -1, "[": -1, "x[y[z": -1},
		Labels:    map[string]string{"k[2": " ", "k[1": " ", "ray.io/a": " "},
	}
	want := []string{
		"svc.resources[[]", "svc.resources[a[b]", "svc.resources[b]", "svc.resources[m.n]", "svc.resources[x[y[z]", "svc.resources[z[1]",
		"svc.labels[k[1]", "svc.labels[k[2]", "svc.labels[ray.io/a]",
	}
	for run := range 50 {
		errs := field.ValidateStruct(field.NewPath("svc"), &s)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("run %d: error order (-want +got):\n%s", run, diff)
		}
	}
}
