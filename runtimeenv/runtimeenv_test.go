package runtimeenv_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/runtimeenv"
)

func TestRuntimeEnvJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want *runtimeenv.RuntimeEnv
	}{
		{"typed", `{"working_dir":"gcs://a.zip","env_vars":{"A":"1"},"pip":["x"]}`,
			&runtimeenv.RuntimeEnv{WorkingDir: "gcs://a.zip", EnvVars: map[string]string{"A": "1"}, Pip: []string{"x"}}},
		{"pip as a dict stays verbatim", `{"pip":{"packages":["x"],"pip_check":false}}`,
			&runtimeenv.RuntimeEnv{Extra: map[string]any{"pip": map[string]any{"packages": []any{"x"}, "pip_check": false}}}},
		{"config of another shape", `{"config":{"setup_timeout_seconds":"soon"},"env_vars":{"A":"1"}}`,
			&runtimeenv.RuntimeEnv{EnvVars: map[string]string{"A": "1"}, Extra: map[string]any{"config": map[string]any{"setup_timeout_seconds": "soon"}}}},
		{"unknown keys", `{"conda":"env","uv":["y"]}`,
			&runtimeenv.RuntimeEnv{Extra: map[string]any{"conda": "env", "uv": []any{"y"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got runtimeenv.RuntimeEnv
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, &got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// And back: the same object.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var a, c any
			json.Unmarshal([]byte(tt.in), &a)
			json.Unmarshal(b, &c)
			if diff := cmp.Diff(a, c); diff != "" {
				t.Errorf("round trip (-in +out):\n%s", diff)
			}
		})
	}
	if _, err := json.Marshal(runtimeenv.RuntimeEnv{WorkingDir: "gcs://a.zip", Extra: map[string]any{"working_dir": "x"}}); err == nil {
		t.Error("Extra duplicating a typed key: no error")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	env := runtimeenv.RuntimeEnv{
		WorkingDir: "gcs://a.zip",
		EnvVars:    map[string]string{"OK": "1", "": "x", "A=B": "y"},
		Extra:      map[string]any{"working_dir": "gcs://b.zip", "conda": "env"},
	}
	var got []string
	for _, e := range env.Validate(field.NewPath("app", "runtimeEnv")) {
		got = append(got, e.Field+" "+string(e.Type))
	}
	want := []string{
		`app.runtimeEnv.envVars[] Invalid`,
		`app.runtimeEnv.envVars[A=B] Invalid`,
		`app.runtimeEnv.extra[working_dir] Forbidden`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	valid := runtimeenv.RuntimeEnv{EnvVars: map[string]string{"JAX_PLATFORMS": "cpu"}, Extra: map[string]any{"conda": "env"}}
	if errs := valid.Validate(field.NewPath("x")); len(errs) != 0 {
		t.Errorf("a valid env: %v", errs)
	}
}

// A nil RuntimeEnv is no runtime env: empty and valid.
func TestNilRuntimeEnv(t *testing.T) {
	var e *runtimeenv.RuntimeEnv
	if !e.IsEmpty() || e.Validate(field.NewPath("runtime_env")) != nil {
		t.Error("a nil RuntimeEnv is not empty and valid")
	}
}
