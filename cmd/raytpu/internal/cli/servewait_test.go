package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

const helloServe = `from ray import serve


@serve.deployment
class Hello:
    def __call__(self, request):
        return "hello"


app = Hello.bind()
`

// TestServeDeployWaitPlainOnRealRay deploys a two-replica application from a
// local directory on real Ray with --wait and output that is not a
// terminal: the upload, the application and metrics links, the states
// with the time in each, the replicas running of wanted, the final state,
// all as timestamped lines, then the status table.
func TestServeDeployWaitPlainOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte(helloServe), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "hello.yaml")
	app := fmt.Sprintf("name: progress\nroute_prefix: /progress\nimport_path: hello:app\nruntime_env:\n  working_dir: %s\ndeployments:\n  - name: Hello\n    num_replicas: 2\n    ray_actor_options:\n      num_cpus: 0\n", dir)
	if err := os.WriteFile(file, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), []string{"serve", "deploy", "-f", file, "--wait", "--timeout", "4m", "--address", c.DashboardURL}, &out, &errb)
	t.Cleanup(func() {
		// t.Context() is cancelled before cleanups run: the delete gets a
		// context of its own, so the application really goes and the
		// package's later Serve tests find a clean cluster.
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), []string{"serve", "delete", "progress", "--address", c.DashboardURL}, &out, &errb); code != cli.ExitOK {
			t.Errorf("raytpu serve delete progress: exit %d\n%s%s", code, out.String(), errb.String())
		}
	})
	t.Logf("raytpu serve deploy --wait: exit %d\n%s%s", code, out.String(), errb.String())
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	stampedOnly := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ .*$`)
	var lines []string
	for _, l := range stampedOnly.FindAllString(out.String(), -1) {
		lines = append(lines, stamped.FindStringSubmatch(l)[1])
	}
	matchInOrder(t, lines, mustCompile(
		`^working_dir 0 MiB/0 MiB 100%$`,
		`^working_dir uploaded, deploy request answered in `,
		`^application: `+regexp.QuoteMeta(c.DashboardURL+"/#/serve/applications/progress")+`$`,
		`^metrics: `,
		`^(DEPLOYING|RUNNING)`,
		`^replicas running: Hello [0-2]/2$`,
		`^RUNNING`,
		`^replicas running: Hello 2/2$`,
		`^RUNNING in (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`,
	))
	if !regexp.MustCompile(`(?m)^Hello +HEALTHY +2/2`).MatchString(out.String()) {
		t.Errorf("no status table with Hello HEALTHY 2/2 after the wait")
	}
}
