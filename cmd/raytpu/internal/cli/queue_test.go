package cli_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// --queue renders a job's RayJob in a Kueue LocalQueue: the queue label,
// created suspended (another name than render-jaxtrain-v6e.yaml's RayJob:
// the kuberay tests apply every golden file into one namespace).
func TestRenderQueue(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "render", "-f", "testdata/plans/jaxtrain-v6e-two-slices.json", "--queue", "team-a", "--name", "llama-queued")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	golden.Assert(t, "render-jaxtrain-queued.yaml", []byte(out))
	if !strings.Contains(out, "kueue.x-k8s.io/queue-name: team-a") || !strings.Contains(out, "suspend: true") {
		t.Error("the RayJob lacks the queue label or suspend: true")
	}
}

// What Kueue refuses is a usage error naming the flag.
func TestRenderQueueErrors(t *testing.T) {
	t.Parallel()
	plan := "testdata/plans/jaxtrain-v6e-two-slices.json"
	for _, c := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"bad queue name", []string{"render", "-f", plan, "--queue", "Team_A"}, `--queue "Team_A": the name of a Kueue LocalQueue`},
		{"queue and autoscale", []string{"render", "-f", plan, "--queue", "team-a", "--autoscale"}, "--autoscale: Kueue admits a fixed number of pods"},
		{"queue on a ray cluster", []string{"render", "-f", plan, "--queue", "team-a", "--ray-cluster", "pool"}, "--ray-cluster: Kueue does not queue a RayJob on an existing RayCluster"},
		{"queued Serve application", []string{"render", "-f", "testdata/apps/chat.yaml", "--queue", "team-a"}, "--queue: a Serve application's RayService cannot be queued: Kueue v0.17 queues RayServices only with KubeRay v1.6's types"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := run(t, c.args...)
			if code != cli.ExitUsage || !strings.Contains(errOut, c.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, cli.ExitUsage, c.stderr)
			}
		})
	}
}
