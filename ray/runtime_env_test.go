package ray_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
)

func TestJobSubmissionJSON(t *testing.T) {
	t.Parallel()
	eager := true
	sub := ray.JobSubmission{
		Entrypoint:   "python train.py",
		SubmissionID: "raytpu_x",
		RuntimeEnv: &ray.RuntimeEnv{
			WorkingDir: "gcs://_ray_pkg_0123456789abcdef.zip",
			PyModules:  []string{"gcs://_ray_pkg_fedcba9876543210.zip"},
			Pip:        []string{"numpy==2.4.6"},
			EnvVars:    map[string]string{"JAX_PLATFORMS": "cpu"},
			Excludes:   []string{"*.ckpt"},
			Config:     &ray.RuntimeEnvConfig{SetupTimeoutSeconds: 600, EagerInstall: &eager},
			Extra:      map[string]any{"image_uri": "img:1"},
		},
		Metadata:                map[string]string{"team": "tpu"},
		EntrypointNumCPUs:       1,
		EntrypointMemory:        1 << 30,
		EntrypointResources:     map[string]float64{"TPU-v6e-16-head": 1},
		EntrypointLabelSelector: map[string]string{"ray.io/tpu-worker-id": "0"},
	}
	b, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"entrypoint":"python train.py","submission_id":"raytpu_x",` +
		`"runtime_env":{"config":{"setup_timeout_seconds":600,"eager_install":true},"env_vars":{"JAX_PLATFORMS":"cpu"},` +
		`"excludes":["*.ckpt"],"image_uri":"img:1","pip":["numpy==2.4.6"],"py_modules":["gcs://_ray_pkg_fedcba9876543210.zip"],` +
		`"working_dir":"gcs://_ray_pkg_0123456789abcdef.zip"},"metadata":{"team":"tpu"},"entrypoint_num_cpus":1,` +
		`"entrypoint_memory":1073741824,"entrypoint_resources":{"TPU-v6e-16-head":1},` +
		`"entrypoint_label_selector":{"ray.io/tpu-worker-id":"0"}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	// Minimal submission: only the entrypoint.
	b, _ = json.Marshal(ray.JobSubmission{Entrypoint: "true"})
	if string(b) != `{"entrypoint":"true"}` {
		t.Errorf("minimal JSON = %s", b)
	}
}

func TestRuntimeEnvJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want *ray.RuntimeEnv
	}{
		{"typed", `{"working_dir":"gcs://a.zip","env_vars":{"A":"1"},"pip":["x"]}`,
			&ray.RuntimeEnv{WorkingDir: "gcs://a.zip", EnvVars: map[string]string{"A": "1"}, Pip: []string{"x"}}},
		{"pip as a dict stays verbatim", `{"pip":{"packages":["x"],"pip_check":false}}`,
			&ray.RuntimeEnv{Extra: map[string]any{"pip": map[string]any{"packages": []any{"x"}, "pip_check": false}}}},
		{"config of another shape", `{"config":{"setup_timeout_seconds":"soon"},"env_vars":{"A":"1"}}`,
			&ray.RuntimeEnv{EnvVars: map[string]string{"A": "1"}, Extra: map[string]any{"config": map[string]any{"setup_timeout_seconds": "soon"}}}},
		{"unknown keys", `{"conda":"env","uv":["y"]}`,
			&ray.RuntimeEnv{Extra: map[string]any{"conda": "env", "uv": []any{"y"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got ray.RuntimeEnv
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
	if _, err := json.Marshal(ray.RuntimeEnv{WorkingDir: "gcs://a.zip", Extra: map[string]any{"working_dir": "x"}}); err == nil {
		t.Error("Extra duplicating a typed key: no error")
	}
}
