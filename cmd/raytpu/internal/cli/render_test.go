package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// raytpu render prints the KubeRay object of each kind of workload file;
// the kuberay package's kube tests apply what it prints to a real
// apiserver.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"render-app-chat.yaml":           {"render", "-f", "testdata/apps/chat.yaml"},
		"render-app-llm.yaml":            {"render", "-f", "testdata/apps/llm.yaml"},
		"render-jaxtrain-v6e.yaml":       {"render", "-f", "testdata/plans/jaxtrain-v6e-two-slices.json", "--namespace", "research"},
		"render-slice-v4-per-slice.json": {"render", "-f", "testdata/plan-v4-per-slice.json", "-o", "json", "--name", "reserved"},
		"render-app-chat-own-image.yaml": {"render", "-f", "testdata/apps/chat.yaml", "--image", "us-docker.pkg.dev/acme/ray:tpu", "--name", "chat-prod"},
	}
	// A job plan whose working_dir is a local directory renders its
	// packed files as a ConfigMap before the RayJob.
	plan, err := os.ReadFile("testdata/plans/jaxtrain-v6e-two-slices.json")
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "local.json")
	if err := os.WriteFile(local, []byte(strings.Replace(string(plan), "gs://bucket/code/loop.zip", "testdata/workdir", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases["render-jaxtrain-local-working-dir.yaml"] = []string{"render", "-f", local, "--name", "llama-local"}
	// The same on an existing RayCluster: the ConfigMap is mounted into the
	// submitter pod, which uploads the zip.
	cases["render-jaxtrain-on-ray-cluster.yaml"] = []string{"render", "-f", local, "--name", "llama-on-pool", "--ray-cluster", "tpu-pool"}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, args...)
			if code != cli.ExitOK {
				t.Fatalf("exit %d; stderr: %s", code, errOut)
			}
			golden.Assert(t, name, []byte(out))
			if again, _, _ := run(t, args...); again != out {
				t.Error("output differs between two runs")
			}
		})
	}
}

// A compiled Serve plan read back from `raytpu plan -o json` renders the
// same RayService as the application file it was compiled from: the same
// serveConfigV2 bytes and the same plan digest, so applying either
// changes nothing once the other is applied.
func TestRenderPlanFileIsAppFile(t *testing.T) {
	t.Parallel()
	fromApp, errOut, code := run(t, "render", "-f", "testdata/apps/chat.yaml")
	if code != cli.ExitOK {
		t.Fatalf("app file: exit %d; stderr: %s", code, errOut)
	}
	fromPlan, errOut, code := run(t, "render", "-f", "testdata/plan-app-chat.json")
	if code != cli.ExitOK {
		t.Fatalf("plan file: exit %d; stderr: %s", code, errOut)
	}
	if fromPlan != fromApp {
		t.Errorf("rendered from the plan file:\n%s\nfrom the app file:\n%s", fromPlan, fromApp)
	}
	golden.Assert(t, "render-app-chat.yaml", []byte(fromPlan))
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan, err := os.ReadFile("testdata/plans/jaxtrain-v6e-two-slices.json")
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local.json")
	if err := os.WriteFile(local, []byte(strings.Replace(string(plan), "gs://bucket/code/loop.zip", "./loop", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo.json")
	if err := os.WriteFile(typo, []byte(strings.Replace(string(plan), `"slices"`, `"slicez"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no file", []string{"render"}, cli.ExitUsage, "-f FILE is required"},
		{"bad output", []string{"render", "-f", "testdata/apps/chat.yaml", "-o", "yml"}, cli.ExitUsage, `did you mean "yaml"?`},
		{"local working_dir", []string{"render", "-f", local}, cli.ExitInvalid, "plan.job.runtimeEnv.workingDir"},
		{"unknown plan field", []string{"render", "-f", typo}, cli.ExitInvalid, `not a valid compiled plan: slicez (line 5): Unsupported value: "slicez": unknown field: did you mean "slices"?`},
		{"bad name", []string{"render", "-f", "testdata/apps/chat.yaml", "--name", "Chat_App"}, cli.ExitUsage, `--name "Chat_App": not a valid RayService name`},
		{"service on a ray cluster", []string{"render", "-f", "testdata/apps/chat.yaml", "--ray-cluster", "tpu-pool"}, cli.ExitUsage, "--ray-cluster: only a job (a RayJob) runs on an existing RayCluster"},
		{"bad name on apply too", []string{"apply", "-f", "testdata/apps/chat.yaml", "--name", "Chat_App", "--kubeconfig", filepath.Join(dir, "missing")}, cli.ExitUsage, `(e.g. "chat-app")`},
		// A bad flag value exits 2 and names the flag as typed, before
		// anything is read or contacted.
		{"package bucket without gs://", []string{"render", "-f", "testdata/apps/chat.yaml", "--package-bucket", "my-bucket"}, cli.ExitUsage, `--package-bucket "my-bucket": a Cloud Storage bucket, gs://bucket or gs://bucket/prefix`},
		{"negative min slices", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--min-slices", "-1"}, cli.ExitUsage, "--min-slices -1: slices from 0"},
		{"negative idle timeout", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--idle-timeout", "-5s"}, cli.ExitUsage, `--idle-timeout "-5s": must be 0`},
		{"autoscaler v3", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--autoscaler-version", "v3"}, cli.ExitUsage, `--autoscaler-version "v3": supported: v1, v2`},
		{"upscaling mode x", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--upscaling-mode", "x"}, cli.ExitUsage, `--upscaling-mode "x": supported: Default, Conservative, Aggressive`},
		{"a group the plan lacks", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--group-slices", "nosuch=1:2"}, cli.ExitUsage, `--group-slices "nosuch": supported: `},
		{"head CPUs without a value", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--head-cpus"}, cli.ExitUsage, "--head-cpus"},
		{"negative head CPUs", []string{"render", "-f", "testdata/apps/chat.yaml", "--autoscale", "--head-cpus", "-3"}, cli.ExitUsage, "--head-cpus -3: CPUs from 1"},
		{"bad namespace", []string{"render", "-f", "testdata/apps/chat.yaml", "--namespace", "Bad_NS!"}, cli.ExitUsage, `--namespace "Bad_NS!": a DNS-1123 label`},
		{"image with a newline", []string{"render", "-f", "testdata/apps/chat.yaml", "--image", "rayproject/ray:2.60.0\nx"}, cli.ExitUsage, `--image "rayproject/ray:2.60.0\nx": an image reference has no control characters`},
		{"max slices without autoscale", []string{"render", "-f", "testdata/apps/chat.yaml", "--max-slices", "2"}, cli.ExitUsage, "--max-slices needs --autoscale"},
		{"bad flag on apply, before the cluster", []string{"apply", "-f", "testdata/apps/chat.yaml", "--autoscale", "--min-slices", "-1", "--kubeconfig", filepath.Join(dir, "missing")}, cli.ExitUsage, "--min-slices -1"},
		{"ray cluster on apply, before the cluster", []string{"apply", "-f", "testdata/apps/chat.yaml", "--ray-cluster", "tpu-pool", "--kubeconfig", filepath.Join(dir, "missing")}, cli.ExitUsage, "--ray-cluster: only a job"},
		// Capacity classes GKE refuses together, or for the plan's TPUs.
		{"spot with a reservation", []string{"render", "-f", "testdata/apps/chat.yaml", "--capacity", "spot", "--reservation", "tpu-res"}, cli.ExitUsage, `--capacity "spot": supported: reservation`},
		{"capacity typo", []string{"render", "-f", "testdata/apps/chat.yaml", "--capacity", "spott"}, cli.ExitUsage, `--capacity "spott": supported: on-demand, spot, reservation, flex-start (did you mean "spot"?)`},
		{"reservation path", []string{"render", "-f", "testdata/apps/chat.yaml", "--reservation", "projects/acme/reservations/r"}, cli.ExitUsage, `--reservation "projects/acme/reservations/r": the reservation's name alone`},
		{"flex-start on v4", []string{"render", "-f", "testdata/apps/chat.yaml", "--capacity", "flex-start"}, cli.ExitInvalid, `plan.slices[0].generation: Unsupported value: "v4"`},
		{"capacity on a ray cluster", []string{"apply", "-f", "testdata/plans/jaxtrain-v6e-two-slices.json", "--ray-cluster", "tpu-pool", "--capacity", "spot", "--kubeconfig", filepath.Join(dir, "missing")}, cli.ExitUsage, "--capacity: a RayJob on an existing cluster"},
		{"flex-start on v4 in plan", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--capacity", "flex-start"}, cli.ExitUsage, `--capacity flex-start: slices[0].generation: Unsupported value: "v4"`},
		{"quota of another resource", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--quota", "cpu=8"}, cli.ExitUsage, `--quota "cpu=8": the quota is of google.com/tpu chips`},
		{"quota of no class", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--quota", "sopt:google.com/tpu=8"}, cli.ExitUsage, `quota.class: Unsupported value: "sopt"`},
		{"negative quota", []string{"plan", "--accelerator", "v4", "--topology", "2x2x2", "--quota", "google.com/tpu=-8"}, cli.ExitUsage, `quota.tpu: Invalid value: -8`},
		{"apply without file", []string{"apply"}, cli.ExitUsage, "-f FILE is required"},
		{"apply without a cluster", []string{"apply", "-f", "testdata/apps/chat.yaml", "--kubeconfig", filepath.Join(dir, "missing")}, cli.ExitInvalid, "kubeconfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, c.code, c.stderr)
			}
		})
	}
}

// A compiled plan gets one digest whichever way it reaches the renderer:
// rendered in Go from the plan, or by `raytpu render -f plan.json`, whose
// file decoding reorders the keys of the plan's raw parts (the job's
// launcherConfig). Otherwise applying it once each way would be
// ErrAlreadyExists.
func TestRenderDigestIsThePlans(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/plans/jaxtrain-v6e-two-slices.json")
	if err != nil {
		t.Fatal(err)
	}
	var p placement.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	m, err := kuberay.Render(&p, kuberay.Options{}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := m.Job.Annotations[kuberay.AnnotationPlanDigest]
	// The plan as Go writes it: launcherConfig in its struct order.
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	raw, err := p.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "render", "-f", file)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, kuberay.AnnotationPlanDigest+": "+want) {
		t.Errorf("render -f plan.json does not carry the plan's digest %s:\n%s", want, out)
	}
}
