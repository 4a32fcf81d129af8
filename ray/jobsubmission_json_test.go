package ray_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

func TestJobSubmissionJSON(t *testing.T) {
	t.Parallel()
	eager := true
	sub := ray.JobSubmission{
		Entrypoint:   "python train.py",
		SubmissionID: "raytpu_x",
		RuntimeEnv: &runtimeenv.RuntimeEnv{
			WorkingDir: "gcs://_ray_pkg_0123456789abcdef.zip",
			PyModules:  []string{"gcs://_ray_pkg_fedcba9876543210.zip"},
			Pip:        []string{"numpy==2.4.6"},
			EnvVars:    map[string]string{"JAX_PLATFORMS": "cpu"},
			Excludes:   []string{"*.ckpt"},
			Config:     &runtimeenv.Config{SetupTimeoutSeconds: 600, EagerInstall: &eager},
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
