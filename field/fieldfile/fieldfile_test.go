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
		{"string for an int", "deployments:\n- num_replicas: 0o17\n", []ref{{"app.deployments[0].num_replicas", field.TypeInvalid, 2}}, `"0o17"`},
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

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// A file means to raytpu what it means to Ray, whose serve deploy reads
// it with PyYAML's safe_load (YAML 1.1): issue 46's user_config holds
// false, false, true, not the strings "no", "off", "yes".
func TestDecodeAsRay(t *testing.T) {
	t.Parallel()
	in := `name: app
import_path: m:app
args: {yes: 1, 0x10: 2, ~: 3, 1.5: 4, model: llama}
defaults: &defaults
  num_replicas: 0x2
  max_ongoing_requests: 1_000
deployments:
  - name: a
    <<: *defaults
    user_config: {use_cache: no, debug: off, fast: yes, level: 010, minutes: 1:30, ratio: 1e3, exact: 1.0e+3, none: ~, quoted: 'no'}
    resources: {TPU: 4, memory: 1e9, CPU: -.5, GPU: +1, disk: 1e-07}
  - <<: *defaults
    name: b
    num_replicas: 3
`
	type file struct {
		serveApp
		Defaults any `json:"defaults"`
	}
	var f file
	if errs := fieldfile.Decode([]byte(in), field.NewPath("app"), &f); len(errs) > 0 {
		t.Fatal(errs)
	}
	want := serveApp{Name: "app", ImportPath: "m:app",
		Args: map[string]any{"true": 1.0, "16": 2.0, "null": 3.0, "1.5": 4.0, "model": "llama"},
		Deployments: []serveDeployment{
			{Name: "a", NumReplicas: 2, MaxOngoingRequests: 1000,
				UserConfig: map[string]any{"use_cache": false, "debug": false, "fast": true, "level": 8.0, "minutes": 90.0, "ratio": "1e3", "exact": 1000.0, "none": nil, "quoted": "no"},
				Resources:  map[string]float64{"TPU": 4, "memory": 1e9, "CPU": -0.5, "GPU": 1, "disk": 1e-07}},
			{Name: "b", NumReplicas: 3, MaxOngoingRequests: 1000},
		}}
	if diff := cmp.Diff(want, f.serveApp); diff != "" {
		t.Error(diff)
	}
}

func TestDecodeAsRayErrors(t *testing.T) {
	t.Parallel()
	root := field.NewPath("app")
	cases := []struct {
		name, in string
		want     []ref
		text     string
	}{
		{"a boolean for a string", "name: no\n", []ref{{"app.name", field.TypeInvalid, 1}}, `the boolean no (YAML 1.1, as Ray reads it, reads no as false); quote it to mean the string: "no"`},
		{"a date for a string", "name: 2001-12-14\n", []ref{{"app.name", field.TypeInvalid, 1}}, "quote it"},
		{"a date in user_config", "deployments:\n- user_config: {when: 2001-12-14}\n", []ref{{"app.deployments[0].user_config[when]", field.TypeInvalid, 2}}, "date"},
		{"infinity in args", "args: {x: [.inf]}\n", []ref{{"app.args[x][0]", field.TypeInvalid, 1}}, "JSON"},
		{"infinity for a number", "deployments:\n- resources: {TPU: .inf}\n", []ref{{"app.deployments[0].resources[TPU]", field.TypeInvalid, 2}}, "JSON cannot hold"},
		{"a key read twice", "args: {yes: 1, true: 2}\n", []ref{{"app.args[true]", field.TypeInvalid, 1}}, "reads both yes and true as true"},
		{"a list as a key", "args: {? [a]: 1}\n", []ref{{"app.args", field.TypeInvalid, 1}}, "a key must be a name"},
		{"a merged unknown field", "d: &d {num_replica: 1}\ndeployments:\n- <<: *d\n", []ref{{"app.d", field.TypeNotSupported, 1}, {"app.deployments[0].num_replica", field.TypeNotSupported, 1}}, "unknown field"},
		{"merged values that differ", "a: &a {num_replicas: 1}\nb: &b {num_replicas: 2}\ndeployments:\n- <<: [*a, *b]\n", []ref{{"app.deployments[0].num_replicas", field.TypeInvalid, 1}}, "different values (lines 1 and 2)"},
		{"a merge of a scalar", "deployments:\n- {name: a, <<: 1}\n", []ref{{"app.deployments[0]", field.TypeInvalid, 2}}, "merge key"},
		{"a merge key as a value", "name: <<\n", []ref{{"app.name", field.TypeInvalid, 1}}, "merge key"},
		{"an alias that holds itself", "args: &a {x: *a}\n", []ref{{"app.args[x]", field.TypeInvalid, 1}}, "holds itself"},
		{"an unknown tag", "args: {x: !!binary aGk=}\n", []ref{{"app.args[x]", field.TypeInvalid, 1}}, "!!binary"},
		{"a local tag", "name: !env HOME\n", []ref{{"app.name", field.TypeInvalid, 1}}, "!env"},
		{"no digits", "deployments:\n- num_replicas: 0x_\n", []ref{{"app.deployments[0].num_replicas", field.TypeInvalid, 2}}, "no digits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var a struct {
				serveApp
				A any `json:"a"`
				B any `json:"b"`
			}
			errs := fieldfile.Decode([]byte(c.in), root, &a)
			if diff := cmp.Diff(c.want, refs(errs)); diff != "" {
				t.Fatalf("(-want +got):\n%s\n%v", diff, errs)
			}
			if !strings.Contains(errs[len(errs)-1].Error()+errs[0].Error(), c.text) {
				t.Errorf("%v lacks %q", errs, c.text)
			}
		})
	}
}
