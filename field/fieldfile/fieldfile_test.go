package fieldfile_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

type accel struct {
	Topology string `json:"topology"`
}

type deployment struct {
	Name        string             `json:"name"`
	NumReplicas int                `json:"num_replicas"`
	Accelerator *accel             `json:"accelerator_config"`
	Resources   map[string]float64 `json:"resources"`
	Args        map[string]any     `json:"args"`
	Enabled     bool               `json:"enabled"`
}

type app struct {
	Name        string       `json:"name"`
	Deployments []deployment `json:"deployments"`
}

type ref struct {
	Field string
	Type  field.Type
	Line  int
}

func refs(errs field.ErrorList) []ref {
	var out []ref
	for _, e := range errs {
		out = append(out, ref{e.Field, e.Type, e.Line})
	}
	return out
}

func TestDecode(t *testing.T) {
	t.Parallel()
	var a app
	errs := fieldfile.Decode([]byte("name: chat\ndeployments:\n  - name: LLM\n    num_replicas: 2\n    accelerator_config: {topology: '16'}\n    resources: {TPU: 4}\n    args: {1: x, y: [1, {z: true}]}\n"), field.NewPath("app"), &a)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := app{Name: "chat", Deployments: []deployment{{Name: "LLM", NumReplicas: 2, Accelerator: &accel{Topology: "16"}, Resources: map[string]float64{"TPU": 4},
		Args: map[string]any{"1": "x", "y": []any{1.0, map[string]any{"z": true}}}}}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Error(diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	root := field.NewPath("app")
	cases := []struct {
		name, in string
		want     []ref
		text     string // a part of the first error's message
	}{
		{"unknown key", "name: a\ndeployments:\n- name: b\n  num_replica: 2\n", []ref{{"app.deployments[0].num_replica", field.TypeNotSupported, 4}}, `did you mean "num_replicas"?`},
		{"case-sensitive", "Name: a\n", []ref{{"app.Name", field.TypeNotSupported, 1}}, `did you mean "name"?`},
		{"second document", "name: a\n---\nname: b\n", []ref{{"app", field.TypeInvalid, 2}}, "more than one YAML document"},
		{"number for a string", "deployments:\n- accelerator_config:\n    topology: 16\n", []ref{{"app.deployments[0].accelerator_config.topology", field.TypeInvalid, 3}}, `quote it to mean the string: "16"`},
		{"string for an int", "deployments:\n- num_replicas: two\n", []ref{{"app.deployments[0].num_replicas", field.TypeInvalid, 2}}, "want an integer"},
		{"float for an int", "deployments:\n- num_replicas: 1.5\n", []ref{{"app.deployments[0].num_replicas", field.TypeInvalid, 2}}, "want an integer"},
		{"string for a bool", "deployments:\n- enabled: 'yes'\n", []ref{{"app.deployments[0].enabled", field.TypeInvalid, 2}}, "want true or false"},
		{"mapping for a list", "deployments: {a: 1}\n", []ref{{"app.deployments", field.TypeInvalid, 1}}, "want a list"},
		{"list for a mapping", "- a\n", []ref{{"app", field.TypeInvalid, 1}}, "want a mapping"},
		{"string for a number", "deployments:\n- resources: {TPU: four}\n", []ref{{"app.deployments[0].resources[TPU]", field.TypeInvalid, 2}}, "want a number"},
		{"duplicate key", "name: a\nname: b\n", []ref{{"app.name", field.TypeInvalid, 2}}, "given twice"},
		{"empty", "", []ref{{"app", field.TypeRequired, 0}}, "empty"},
		{"null", "~\n", []ref{{"app", field.TypeRequired, 1}}, "no value"},
		{"not yaml", "name: [a\n", []ref{{"app", field.TypeInvalid, 1}}, "not valid YAML"},
		{"every problem at once", "nme: a\ndeployments:\n- num_replicas: x\n  enabled: 1\n", []ref{
			{"app.nme", field.TypeNotSupported, 1}, {"app.deployments[0].num_replicas", field.TypeInvalid, 3}, {"app.deployments[0].enabled", field.TypeInvalid, 4}}, "unknown field"},
		{"too large", "name: " + strings.Repeat("a", fieldfile.MaxFileSize) + "\n", []ref{{"app", field.TypeTooMany, 0}}, "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var a app
			errs := fieldfile.Decode([]byte(c.in), root, &a)
			if diff := cmp.Diff(c.want, refs(errs)); diff != "" {
				t.Fatalf("(-want +got):\n%s\n%v", diff, errs)
			}
			if !strings.Contains(errs[0].Error(), c.text) {
				t.Errorf("%q lacks %q", errs[0].Error(), c.text)
			}
		})
	}
}

// A top-level key of a file read without a root is its own path; Load
// names the file and its kind.
func TestLoad(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/app.yaml"
	if err := writeFile(path, "nam: a\n"); err != nil {
		t.Fatal(err)
	}
	var a app
	err := fieldfile.Load(path, fieldfile.ServeApplication, nil, &a)
	var ke *fieldfile.KindError
	if !errors.As(err, &ke) || ke.Want != fieldfile.ServeApplication || ke.File != path {
		t.Fatalf("Load = %v, want a *KindError for a Serve application", err)
	}
	if got := field.Refs(err); len(got) != 1 || got[0].Field != "nam" {
		t.Errorf("Refs = %v", got)
	}
}

// No input makes Decode panic, hang or accept a value it did not check.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"name: a\ndeployments:\n- {name: b, num_replicas: 2}\n", "a: &x [*x]\n", "name: a\n---\n", "deployments:\n- args: {? [a]: b}\n", "{", "\t", "name: !!binary aGVsbG8=\n", "a: &a {b: *a}\n", "deployments: [{resources: {TPU: .nan}}]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a app
		if errs := fieldfile.Decode(b, field.NewPath("app"), &a); len(errs) > 0 {
			for _, e := range errs {
				if !strings.HasPrefix(e.Field, "app") {
					t.Fatalf("error outside the root: %v", e)
				}
			}
		}
	})
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
