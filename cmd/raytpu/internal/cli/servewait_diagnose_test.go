package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
)

// brokenServe's constructor raises.
const brokenServe = `from ray import serve


@serve.deployment
class Broken:
    def __init__(self):
        raise RuntimeError("raytpu-broken-constructor")


app = Broken.bind()
`

// TestServeWaitDiagnosisOnRealRay: `raytpu serve wait` on an application
// that cannot run prints why and exits 1. One whose replica needs a v4
// 2x2x4 slice (a v4-32, which the cluster does not have) stops as stuck,
// with the live diagnosis naming the pending TPU-v4-32-head reservation
// (raybackend's TestServeLiveDiagnosis checks the same diagnosis through
// the backend); one whose constructor raises stops with DEPLOY_FAILED and
// the constructor's error, which the backend's Wait returns as a typed
// error.
func TestServeWaitDiagnosisOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	client, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	// prof_serve.py (the profile test's deployment) owns a slice per
	// replica: raytpu's replica runtime reserves it before the class is
	// built.
	sliced, err := filepath.Abs(filepath.Join("testdata", "profile"))
	if err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "broken.py"), []byte(brokenServe), 0o644); err != nil {
		t.Fatal(err)
	}
	// deploy writes an application file and deploys it with `raytpu serve
	// deploy`, without waiting.
	deploy := func(t *testing.T, name, yaml string) {
		t.Helper()
		file := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := run(t, "serve", "deploy", "-f", file, "--address", c.DashboardURL); code != cli.ExitOK {
			t.Fatalf("raytpu serve deploy -f %s: exit %d\n%s%s", name+".yaml", code, out, errOut)
		}
	}

	t.Run("no free slice", func(t *testing.T) {
		startServe(t, c, client)
		deploy(t, "toobig", fmt.Sprintf("name: toobig\nroute_prefix: /toobig\nimport_path: prof_serve:app\nruntime_env:\n  working_dir: %s\n"+
			"deployments:\n  - name: Busy\n    num_replicas: 1\n    ray_actor_options:\n      num_cpus: 0\n"+
			"    accelerator_config:\n      accelerator_type: v4\n      topology: 2x2x4\n      head_reservation_timeout_s: 20\n", sliced))
		var out, errOut bytes.Buffer
		code := cli.Main(t.Context(), []string{"serve", "wait", "toobig", "--address", c.DashboardURL, "--stuck-after", "1s", "--timeout", "2m"}, &out, &errOut)
		t.Logf("raytpu serve wait toobig: exit %d\n%s%s", code, out.String(), errOut.String())
		if code != cli.ExitInvalid || !strings.Contains(out.String(), "Diagnosis:") || !strings.Contains(out.String(), "TPU-v4-32-head") {
			t.Errorf("raytpu serve wait on a stuck application: exit %d, want %d and the diagnosis naming TPU-v4-32-head", code, cli.ExitInvalid)
		}
	})

	t.Run("constructor raises", func(t *testing.T) {
		startServe(t, c, client)
		deploy(t, "broken", fmt.Sprintf("name: broken\nroute_prefix: /broken\nimport_path: broken:app\nruntime_env:\n  working_dir: %s\ndeployments:\n  - name: Broken\n    num_replicas: 1\n", broken))
		var out, errOut bytes.Buffer
		code := cli.Main(t.Context(), []string{"serve", "wait", "broken", "--address", c.DashboardURL, "--timeout", "3m"}, &out, &errOut)
		t.Logf("raytpu serve wait broken: exit %d\n%s%s", code, out.String(), errOut.String())
		if code != cli.ExitInvalid || !strings.Contains(out.String(), "DEPLOY_FAILED") || !strings.Contains(out.String()+errOut.String(), "raytpu-broken-constructor") {
			t.Errorf("raytpu serve wait: exit %d, want %d with DEPLOY_FAILED and the constructor's error", code, cli.ExitInvalid)
		}
		// The same through the backend: a typed error with Ray's message.
		b, err := raybackend.New(client, raybackend.WithPollInterval(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Wait(t.Context(), "broken", backend.WaitOptions{})
		var se *backend.ServiceError
		if !errors.As(err, &se) || !errors.Is(err, backend.ErrDeployFailed) || !strings.Contains(se.Status.Message, "raytpu-broken-constructor") {
			t.Errorf("Wait = %v, want a *backend.ServiceError matching ErrDeployFailed with the constructor's message", err)
		}
	})
}
