package field_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
)

func TestPathString(t *testing.T) {
	t.Parallel()
	var root *field.Path
	tests := []struct {
		name string
		path *field.Path
		want string
	}{
		{"nil root", nil, ""},
		{"single", field.NewPath("train"), "train"},
		{"NewPath more", field.NewPath("train", "scaling", "topology"), "train.scaling.topology"},
		{"Child", field.NewPath("train").Child("scaling").Child("topology"), "train.scaling.topology"},
		{"Child more", field.NewPath("train").Child("scaling", "topology"), "train.scaling.topology"},
		{"Index", field.NewPath("serve").Child("deployments").Index(3).Child("name"), "serve.deployments[3].name"},
		{"Index zero", field.NewPath("list").Index(0), "list[0]"},
		{"Key", field.NewPath("train", "scaling", "resourcesPerWorker").Key("TPU"), "train.scaling.resourcesPerWorker[TPU]"},
		{"Key then Child", field.NewPath("labels").Key("ray.io/tpu-topology").Child("value"), "labels[ray.io/tpu-topology].value"},
		{"Index then Index", field.NewPath("grid").Index(1).Index(2), "grid[1][2]"},
		{"Key on nil root", root.Key("TPU"), "[TPU]"},
		{"Index on nil root", root.Index(2), "[2]"},
		{"Child on nil root", root.Child("spec"), "spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.path.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPathImmutable(t *testing.T) {
	t.Parallel()
	base := field.NewPath("train", "scaling")
	a := base.Child("topology")
	b := base.Child("numWorkers")
	c := base.Index(1)
	got := []string{base.String(), a.String(), b.String(), c.String()}
	want := []string{"train.scaling", "train.scaling.topology", "train.scaling.numWorkers", "train.scaling[1]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths changed after deriving children (-want +got):\n%s", diff)
	}
}

func TestConstructors(t *testing.T) {
	t.Parallel()
	p := field.NewPath("train", "scaling", "topology")
	tests := []struct {
		name string
		got  *field.Error
		want *field.Error
	}{
		{
			name: "Required",
			got:  field.Required(p, "a slice topology"),
			want: &field.Error{Type: field.TypeRequired, Field: "train.scaling.topology", Detail: "a slice topology"},
		},
		{
			name: "Invalid",
			got:  field.Invalid(p, "4x", "bad"),
			want: &field.Error{Type: field.TypeInvalid, Field: "train.scaling.topology", BadValue: "4x", Detail: "bad"},
		},
		{
			name: "Forbidden",
			got:  field.Forbidden(field.NewPath("train", "scaling", "labelSelector"), "not with useTPU"),
			want: &field.Error{Type: field.TypeForbidden, Field: "train.scaling.labelSelector", Detail: "not with useTPU"},
		},
		{
			name: "NotSupported with typo",
			got:  field.NotSupported(p, "4x5", []string{"2x2", "4x4"}),
			want: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.topology", BadValue: "4x5",
				ValidValues: []string{"2x2", "4x4"}, Suggestion: "4x4"},
		},
		{
			name: "NotSupported far value",
			got:  field.NotSupported(p, "128x128", []string{"2x2", "4x4"}),
			want: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.topology", BadValue: "128x128",
				ValidValues: []string{"2x2", "4x4"}},
		},
		{
			name: "NotSupported non-string value",
			got:  field.NotSupported(field.NewPath("chipsPerHost"), 3, []string{"1", "4", "8"}),
			want: &field.Error{Type: field.TypeNotSupported, Field: "chipsPerHost", BadValue: 3,
				ValidValues: []string{"1", "4", "8"}},
		},
		{
			name: "TooMany",
			got:  field.TooMany(field.NewPath("numSlices"), 99999999999, 1024, "Ray's tested envelope"),
			want: &field.Error{Type: field.TypeTooMany, Field: "numSlices", BadValue: 99999999999,
				Detail: "must be at most 1024 (Ray's tested envelope)"},
		},
		{
			name: "WithDetail",
			got:  field.NotSupported(p, "9x9", []string{"4x4"}).WithDetail("GKE provisions it"),
			want: &field.Error{Type: field.TypeNotSupported, Field: "train.scaling.topology", BadValue: "9x9",
				ValidValues: []string{"4x4"}, Detail: "GKE provisions it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotSupportedCopiesValidValues(t *testing.T) {
	t.Parallel()
	valid := []string{"2x2", "4x4"}
	e := field.NotSupported(field.NewPath("topology"), "4x5", valid)
	valid[1] = "changed"
	if diff := cmp.Diff([]string{"2x2", "4x4"}, e.ValidValues); diff != "" {
		t.Errorf("ValidValues shares the caller's slice (-want +got):\n%s", diff)
	}
}

// TestErrorFormat pins the one-line rendering users see in logs and CLIs.
func TestErrorFormat(t *testing.T) {
	t.Parallel()
	p := field.NewPath("train", "scaling", "topology")
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("v%d", i)
	}
	tests := []struct {
		name string
		err  *field.Error
		want string
	}{
		{"Required", field.Required(p, ""), `train.scaling.topology: Required value`},
		{"Required with detail", field.Required(p, "a slice topology"), `train.scaling.topology: Required value: a slice topology`},
		{"Forbidden", field.Forbidden(p, "not with useGPU"), `train.scaling.topology: Forbidden: not with useGPU`},
		{"Invalid string", field.Invalid(p, "4x", "not a positive integer"), `train.scaling.topology: Invalid value: "4x": not a positive integer`},
		{"Invalid int", field.Invalid(field.NewPath("chipsPerHost"), -1, "must be positive"), `chipsPerHost: Invalid value: -1: must be positive`},
		{"Invalid nil", field.Invalid(p, nil, ""), `train.scaling.topology: Invalid value: null`},
		{
			"NotSupported with suggestion",
			field.NotSupported(p, "4x5", []string{"2x2", "4x4"}),
			`train.scaling.topology: Unsupported value: "4x5": did you mean "4x4"? (supported: "2x2", "4x4")`,
		},
		{
			"NotSupported with detail",
			field.NotSupported(p, "2x8", []string{"4x4"}).WithDetail("GKE does not provision it"),
			`train.scaling.topology: Unsupported value: "2x8": GKE does not provision it (supported: "4x4")`,
		},
		{
			"NotSupported long list is capped",
			field.NotSupported(field.NewPath("x"), "zzzzzzzz", many),
			`x: Unsupported value: "zzzzzzzz" (supported: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15" and 4 more)`,
		},
		{"TooMany", field.TooMany(field.NewPath("numSlices"), 1<<40, 1024, "the source"), `numSlices: Too many: 1099511627776: must be at most 1024 (the source)`},
		{"TooMany without source", field.TooMany(field.NewPath("n"), 9, 8, ""), `n: Too many: 9: must be at most 8`},
		{"unknown type renders as Invalid", &field.Error{Type: "Other", Field: "f", BadValue: 1.5}, `f: Invalid value: 1.5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestErrorListError(t *testing.T) {
	t.Parallel()
	a := field.Required(field.NewPath("a"), "")
	b := field.Invalid(field.NewPath("b"), 2, "too big")
	tests := []struct {
		name string
		list field.ErrorList
		want string
	}{
		{"empty", nil, "no errors"},
		{"one", field.ErrorList{a}, "a: Required value"},
		{"two", field.ErrorList{a, b}, "2 invalid fields:\n  a: Required value\n  b: Invalid value: 2: too big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.list.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorListErr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		list    field.ErrorList
		wantNil bool
	}{
		{"nil list", nil, true},
		{"empty list", field.ErrorList{}, true},
		{"one error", field.ErrorList{field.Required(field.NewPath("a"), "")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.list.Err()
			if (err == nil) != tt.wantNil {
				t.Fatalf("Err() = %v, want nil: %v", err, tt.wantNil)
			}
			if err != nil {
				if diff := cmp.Diff([]*field.Error(tt.list), field.Errors(err)); diff != "" {
					t.Errorf("Errors(Err()) (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// ref is what tests compare: the field path and the error type.
type ref struct {
	Field string
	Type  field.Type
}

func refs(errs []*field.Error) []ref {
	var out []ref
	for _, e := range errs {
		out = append(out, ref{e.Field, e.Type})
	}
	return out
}

func TestErrorListUnwrapAndAs(t *testing.T) {
	t.Parallel()
	topo := field.NotSupported(field.NewPath("train", "scaling", "topology"), "4x5", []string{"4x4"})
	workers := field.Invalid(field.NewPath("train", "scaling", "numWorkers"), 3, "not a multiple of 4")
	list := field.ErrorList{topo, workers}

	unwrapped := list.Unwrap()
	if len(unwrapped) != 2 || unwrapped[0] != error(topo) || unwrapped[1] != error(workers) {
		t.Fatalf("Unwrap() = %v, want the two errors in order", unwrapped)
	}

	tests := []struct {
		name string
		err  error
	}{
		{"list", list},
		{"Err", list.Err()},
		{"wrapped", fmt.Errorf("compile train: %w", list.Err())},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", list))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var fe *field.Error
			if !errors.As(tt.err, &fe) {
				t.Fatalf("errors.As(%T, *field.Error) = false", tt.err)
			}
			if diff := cmp.Diff(ref{"train.scaling.topology", field.TypeNotSupported}, ref{fe.Field, fe.Type}); diff != "" {
				t.Errorf("errors.As found the wrong error (-want +got):\n%s", diff)
			}
			var l field.ErrorList
			if !errors.As(tt.err, &l) {
				t.Fatalf("errors.As(%T, field.ErrorList) = false", tt.err)
			}
			if !errors.Is(tt.err, workers) {
				t.Errorf("errors.Is(err, second error) = false")
			}
			want := []ref{{"train.scaling.topology", field.TypeNotSupported}, {"train.scaling.numWorkers", field.TypeInvalid}}
			if diff := cmp.Diff(want, refs(field.Errors(tt.err))); diff != "" {
				t.Errorf("Errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	a := field.Required(field.NewPath("train", "scaling", "topology"), "")
	b := field.Forbidden(field.NewPath("train", "scaling", "labelSelector"), "")
	c := field.Invalid(field.NewPath("serve", "numReplicas"), -1, "")
	tests := []struct {
		name string
		err  error
		want []ref
	}{
		{"nil", nil, nil},
		{"plain error", errors.New("boom"), nil},
		{"single Error", a, []ref{{"train.scaling.topology", field.TypeRequired}}},
		{"wrapped single Error", fmt.Errorf("x: %w", b), []ref{{"train.scaling.labelSelector", field.TypeForbidden}}},
		{"list", field.ErrorList{a, b}, []ref{{"train.scaling.topology", field.TypeRequired}, {"train.scaling.labelSelector", field.TypeForbidden}}},
		{
			"joined lists keep every error",
			errors.Join(field.ErrorList{a, b}.Err(), field.ErrorList{c}.Err()),
			[]ref{{"train.scaling.topology", field.TypeRequired}, {"train.scaling.labelSelector", field.TypeForbidden}, {"serve.numReplicas", field.TypeInvalid}},
		},
		{
			"joined with a nil and a plain error",
			errors.Join(errors.New("io"), nil, fmt.Errorf("w: %w", c)),
			[]ref{{"serve.numReplicas", field.TypeInvalid}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, refs(field.Errors(tt.err))); diff != "" {
				t.Errorf("Errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	topologies := []string{"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}
	generations := []string{"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7x"}
	tests := []struct {
		name  string
		s     string
		valid []string
		want  string
	}{
		{"one edit", "4x5", topologies, "4x4"},
		{"multi-digit", "8x17", topologies, "8x16"},
		{"dropped digit", "16x6", topologies, "16x16"},
		{"generation typo", "v6x", generations, "v6e"},
		{"generation upper-case typo", "V5P ", generations, "v5p"},
		{"case-only difference suggests the valid spelling", "V6E", generations, "v6e"},
		{"exact match needs no suggestion", "4x4", topologies, ""},
		{"far value", "128x128", topologies, ""},
		{"far short value", "h100", generations, ""},
		{"two edits on a short string is too far", "v9z", generations, ""},
		{"empty valid list", "4x4", nil, ""},
		{"long string allows up to three edits", "tpu-v5-lite-podslce", []string{"tpu-v5-lite-podslice", "tpu-v6e-slice"}, "tpu-v5-lite-podslice"},
		{"more than three edits is too far even for long strings", "tpu-v5-lite-pdsl", []string{"tpu-v5-lite-podslice"}, ""},
		{"first of equally near values wins", "3x3", []string{"2x3", "3x2"}, "2x3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := field.Nearest(tt.s, tt.valid); got != tt.want {
				t.Errorf("Nearest(%q) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	err := field.ErrorList{
		field.Required(field.NewPath("a"), ""),
		field.Invalid(field.NewPath("b").Index(1), 3, "too big"),
	}
	want := []field.Ref{{Field: "a", Type: field.TypeRequired}, {Field: "b[1]", Type: field.TypeInvalid}}
	if diff := cmp.Diff(want, field.Refs(err)); diff != "" {
		t.Errorf("Refs (-want +got):\n%s", diff)
	}
	if got := field.Refs(nil); got != nil {
		t.Errorf("Refs(nil) = %v, want nil", got)
	}
}

// A long list's message shows MaxErrorsShown errors and counts the rest;
// the list keeps all of them.
func TestErrorListCapped(t *testing.T) {
	t.Parallel()
	var l field.ErrorList
	for i := range 10000 {
		l = append(l, field.Invalid(field.NewPath("app", "models").Index(i), i, "bad"))
	}
	msg := l.Error()
	lines := strings.Split(msg, "\n")
	if len(lines) != 1+field.MaxErrorsShown+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), field.MaxErrorsShown+2, msg)
	}
	if lines[0] != "10,000 invalid fields:" || lines[len(lines)-1] != "  and 9,980 more like it" {
		t.Errorf("first line %q, last line %q", lines[0], lines[len(lines)-1])
	}
	var err error = l
	if got := len(field.Errors(err)); got != 10000 {
		t.Errorf("Errors found %d, want every one of 10000", got)
	}
	var list field.ErrorList
	if !errors.As(err, &list) || len(list) != 10000 {
		t.Errorf("errors.As gave %d errors, want 10000", len(list))
	}
	short := l[:field.MaxErrorsShown]
	if strings.Contains(short.Error(), "more like it") {
		t.Errorf("a list of exactly MaxErrorsShown says more: %s", short.Error())
	}
}
