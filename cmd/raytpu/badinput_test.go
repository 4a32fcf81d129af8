package main_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unreachable is a dashboard address nothing listens on: commands that
// need a cluster must fail at once with exit 1, never hang or exit 0.
const unreachable = "http://127.0.0.1:1"

// badFiles are the files the bad invocations read, one of each kind a
// user writes: a Serve application, a data pipeline file, a cluster spec
// and a compiled plan (as `raytpu plan -o json` prints its "plan").
var badFiles = map[string]string{
	"app.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    num_replicas: 2
    accelerator_config: {accelerator_type: v4, topology: 2x2x2}
`,
	"app-typo.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    num_replica: 2
`,
	"app-case.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    Num_Replicas: 3
`,
	"app-two-docs.yaml": `name: chat
import_path: chat.app:build
---
name: other
import_path: other.app:build
`,
	"app-int-topology.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    accelerator_config: {accelerator_type: v6e, topology: 16}
`,
	"app-bad-topology.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    accelerator_config: {accelerator_type: v4, topology: 4x5}
`,
	"app-no-import.yaml": `name: chat
deployments:
  - name: LLM
`,
	"app-not-yaml.yaml": "name: [chat\n",
	"app-list.yaml":     "- name: chat\n",
	"app-bad-type.yaml": `name: chat
import_path: chat.app:build
deployments:
  - name: LLM
    num_replicas: many
`,
	"data.yaml": `source: {range: {n: 1000}}
iter: {batchSize: 10}
hosts: {workers: 2}
`,
	"data-typo.yaml": `source: {range: {n: 1000}}
iter: {batch_size: 10}
hosts: {workers: 2}
`,
	"data-ragged.yaml": `source: {range: {n: 1000}}
iter: {batchSize: 10, ragged: shuffle}
hosts: {workers: 2}
`,
	"data-negative.yaml": `source: {range: {n: 1000}}
iter: {batchSize: -1}
hosts: {workers: 2}
`,
	"data-no-workers.yaml": `source: {range: {n: 1000}}
iter: {batchSize: 10}
hosts: {workers: 0}
`,
	"data-two-sources.yaml": `source: {range: {n: 10}, fromItems: {items: [1]}}
iter: {batchSize: 10}
hosts: {workers: 1}
`,
	"data-string-batch.yaml": `source: {range: {n: 1000}}
iter: {batchSize: ten}
hosts: {workers: 2}
`,
	"data-missing-parquet.yaml": `source: {readParquet: {paths: [nope.parquet]}}
iter: {batchSize: 10}
hosts: {workers: 2}
`,
	"data-not-parquet.yaml": `source: {readParquet: {paths: [not.parquet]}}
iter: {batchSize: 10}
hosts: {workers: 2}
`,
	"data-empty-dir.yaml": `source: {readParquet: {paths: [emptydir]}}
iter: {batchSize: 10}
hosts: {workers: 2}
`,
	"not.parquet": "this is not Parquet\n",
	"cluster.yaml": `nodes:
  - podType: v6e-16
    count: 2
`,
	"cluster-typo.yaml": `nodes:
  - podtype: v6e-16
    count: 2
`,
	"cluster-two-docs.yaml": `nodes:
  - podType: v6e-16
---
nodes:
  - podType: v4-8
`,
	"cluster-count.yaml": `nodes:
  - podType: v6e-16
    count: 0
`,
	"cluster-pod.yaml": `nodes:
  - podType: v6e-17
`,
	"cluster-memory.yaml": `nodes:
  - podType: cpu
    memory: lots
`,
	"cluster-empty.yaml": "# nothing\n",
	"plan.json": `{
  "apiVersion": "raytpu.dev/v1alpha1",
  "kind": "SlicePlacementGroup",
  "name": "demo",
  "slices": []
}
`,
	"plan-version.json": `{
  "apiVersion": "raytpu.dev/v1",
  "kind": "SlicePlacementGroup",
  "name": "demo",
  "slices": []
}
`,
	"plan-typo.json": `{
  "apiVersion": "raytpu.dev/v1alpha1",
  "kind": "SlicePlacementGroup",
  "name": "demo",
  "slicess": []
}
`,
	"plan-kind.json": `{
  "apiVersion": "raytpu.dev/v1alpha1",
  "kind": "Cluster",
  "name": "demo",
  "slices": []
}
`,
	"plan-report.json": `{"cluster": "x", "plan": {"apiVersion": "v0", "kind": "JaxTrainer"}}
`,
	"plan-not-json.json": "{\"apiVersion\": \n",
	"kubeconfig": `apiVersion: v1
kind: Config
clusters:
  - name: none
    cluster: {server: "http://127.0.0.1:1"}
users:
  - name: none
    user: {}
contexts:
  - name: none
    context: {cluster: none, user: none}
current-context: none
`,
}

// TestBadInvocations runs the built binary on bad input of every command
// and every file kind: each exits with the code of the one rule (1 invalid
// input or failed operation, 2 usage), names the field or flag at fault,
// and never shows a Go stack trace.
func TestBadInvocations(t *testing.T) {
	bin := buildRaytpu(t)
	dir := t.TempDir()
	for name, body := range badFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An application file over the largest file raytpu reads (1 MiB,
	// fieldfile.MaxFileSize): refused before it is parsed.
	huge := "name: huge\nimport_path: a:b\nargs:\n  blob: " + strings.Repeat("x", 2<<20) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "app-huge.yaml"), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 70)
	const usage, invalid = 2, 1
	a := "--address=" + unreachable
	cases := []struct {
		args  []string
		code  int
		names string // the field, flag or file the message must name
	}{
		// Commands and subcommands.
		{[]string{}, usage, "needs a command"},
		{[]string{"bogus"}, usage, `"bogus"`},
		{[]string{"catlog"}, usage, `did you mean "catalog"`},
		{[]string{"job"}, usage, "raytpu job needs a command"},
		{[]string{"job", "bogus"}, usage, `"bogus"`},
		{[]string{"serve", "delpoy"}, usage, `did you mean "deploy"`},
		{[]string{"data"}, usage, "raytpu data needs a command"},
		{[]string{"data", "bogus"}, usage, `"bogus"`},
		{[]string{"dev-cluster", "bogus"}, usage, `"bogus"`},
		// Flags and arguments.
		{[]string{"catalog", "--bogus"}, usage, "--bogus"},
		{[]string{"catalog", "v4", "v5p"}, usage, "at most one generation"},
		{[]string{"catalog", "-o", "xml"}, usage, "--output"},
		{[]string{"slice", "v6e"}, usage, "GEN TOPOLOGY"},
		{[]string{"slice", "v6e", "4x4", "--chips-per-host", "four"}, usage, "--chips-per-host"},
		{[]string{"plan", "--bogus"}, usage, "--bogus"},
		{[]string{"plan", "--num-slices", "abc"}, usage, "--num-slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "-o", "xml"}, usage, "--output"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "2*v6e-16", "--cluster-file", "cluster.yaml"}, usage, "--cluster-file"},
		{[]string{"plan", "-f", "app.yaml", "--cluster", "v4-8", "--cluster-file", "cluster.yaml"}, usage, "--cluster-file"},
		{[]string{"plan", "-f", "app.yaml", "--accelerator", "v4"}, usage, "--accelerator"},
		{[]string{"plan", "-f", "app.yaml", "-o", "svg"}, usage, "-o svg"},
		{[]string{"render"}, usage, "-f FILE"},
		{[]string{"render", "-f", "app.yaml", "-o", "toml"}, usage, "--output"},
		{[]string{"render", "-f"}, usage, "-f"},
		{[]string{"apply"}, usage, "-f FILE"},
		{[]string{"apply", "-f", "app.yaml", "--timeout", "-1s"}, usage, "--timeout"},
		{[]string{"apply", "-f", "app.yaml", "--timeout", "soon"}, usage, "--timeout"},
		{[]string{"serve", "deploy", a}, usage, "-f APP.yaml"},
		{[]string{"serve", "deploy", "-f", "app.yaml", "--timeout", "-1s", a}, usage, "--timeout"},
		{[]string{"serve", "wait", "chat", "--timeout", "-1s", a}, usage, "--timeout"},
		{[]string{"serve", "status", a}, usage, "NAME"},
		{[]string{"serve", "delete", "a", "b", a}, usage, "NAME"},
		{[]string{"job", "submit", "--timeout", "-1s", a, "--", "ls"}, usage, "--timeout"},
		{[]string{"job", "wait", "x", "--timeout", "-1s", a}, usage, "--timeout"},
		{[]string{"job", "submit", a}, usage, "entrypoint"},
		{[]string{"job", "status", a}, usage, "ID"},
		{[]string{"job", "list", "-o", "xml", a}, usage, "--output"},
		{[]string{"job", "logs", "x", "--timeout", "-1s", a}, usage, "--timeout"},
		{[]string{"job", "list", "--address", "http://127.0.0.1:99999"}, usage, "--address"},
		{[]string{"job", "submit", "--working-dir", "/nonexistent", a, "--", "ls"}, usage, "--working-dir"},
		{[]string{"plan", "--topology", "4x4"}, usage, "--accelerator"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "-2"}, usage, "--num-slices -2: want 1 or more slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "262144*v6e-16", "-o", "svg"}, usage, "-o svg"},
		{[]string{"profile", "--target", "not a host", "-o", "logs"}, usage, "--target"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", "logs", "--duration", "-2s"}, usage, "--duration"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", "app.yaml"}, usage, "--out-dir"},
		{[]string{"job", "list", "--address", "http://[::1"}, usage, "--address"},
		{[]string{"data", "plan"}, usage, "-f DATASET.yaml"},
		{[]string{"data", "plan", "-f", "data.yaml", "-o", "svg"}, usage, "--output"},
		{[]string{"top", "--interval", "0s", a}, usage, "--interval"},
		{[]string{"top", "--metric", "bogus", a}, usage, "--metric"},
		{[]string{"top", "--node-addr", "nohost", a}, usage, "--node-addr"},
		{[]string{"profile", "--job", "x", a}, usage, "--out-dir"},
		{[]string{"profile", "-o", "logs", a}, usage, "--job"},
		{[]string{"profile", "--job", "x", "--deployment", "d", "-o", "logs", a}, usage, "--deployment"},
		{[]string{"profile", "--job", "x", "--worker", "-1", "-o", "logs", a}, usage, "--worker -1"},
		{[]string{"profile", "--app", "x", "--deployment", "d", "--host", "-2", "-o", "logs", a}, usage, "--host -2"},
		{[]string{"dev-cluster", "up", "--cpus-per-node", "0"}, usage, "--cpus-per-node"},

		// Invalid values of arguments that are specs.
		{[]string{"catalog", "v99"}, invalid, "v99"},
		{[]string{"slice", "v6e", "4x5"}, invalid, `did you mean "4x4"`},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "16x16x16"}, usage, "--topology"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "0"}, usage, "--num-slices 0: want 1 or more slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", "TPU=4"}, usage, "--resources-per-bundle"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "bogus"}, usage, "--cluster"},
		{[]string{"dev-cluster", "up", "--cluster", "v6e-17"}, invalid, "podType"},
		{[]string{"dev-cluster", "down", "--state", "no-state.json"}, invalid, "no-state.json"},

		// Cluster spec files.
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "missing.yaml"}, invalid, "--cluster-file"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-typo.yaml"}, invalid, `did you mean "podType"`},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-two-docs.yaml"}, invalid, "more than one YAML document"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-count.yaml"}, invalid, "nodes[0].count"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-pod.yaml"}, invalid, "nodes[0].podType"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-memory.yaml"}, invalid, "nodes[0].memory"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", "cluster-empty.yaml"}, invalid, "nodes"},
		{[]string{"plan", "-f", "app.yaml", "--cluster-file", "cluster-typo.yaml"}, invalid, "podtype"},

		// Serve application files, through every command that reads one.
		{[]string{"plan", "-f", "missing.yaml"}, invalid, "missing.yaml"},
		{[]string{"plan", "-f", "app-typo.yaml"}, invalid, `did you mean "num_replicas"`},
		{[]string{"plan", "-f", "app-case.yaml"}, invalid, "Num_Replicas"},
		{[]string{"plan", "-f", "app-two-docs.yaml"}, invalid, "more than one YAML document"},
		{[]string{"plan", "-f", "app-int-topology.yaml"}, invalid, "accelerator_config.topology"},
		{[]string{"plan", "-f", "app-bad-topology.yaml"}, invalid, "deployments[LLM].accelerator_config.topology"},
		{[]string{"plan", "-f", "app-no-import.yaml"}, invalid, "import_path"},
		{[]string{"plan", "-f", "app-not-yaml.yaml"}, invalid, "app-not-yaml.yaml"},
		{[]string{"plan", "-f", "app-list.yaml"}, invalid, "app-list.yaml"},
		{[]string{"plan", "-f", "app-bad-type.yaml"}, invalid, "num_replicas"},
		{[]string{"render", "-f", "app-typo.yaml"}, invalid, "num_replica"},
		{[]string{"render", "-f", "app-two-docs.yaml"}, invalid, "more than one YAML document"},
		{[]string{"render", "-f", "app-int-topology.yaml"}, invalid, "topology"},
		{[]string{"render", "-f", "missing.yaml"}, invalid, "missing.yaml"},
		{[]string{"apply", "-f", "app-typo.yaml", "--kubeconfig", "kubeconfig"}, invalid, "num_replica"},
		// Kubernetes names: a name the user gives (--name, a flag) is used as
		// it is or refused as a usage error, by render and apply alike; an
		// object too large is refused first.
		{[]string{"render", "-f", "app.yaml", "--name", "Bad_Name"}, usage, `--name "Bad_Name": not a valid RayService name`},
		{[]string{"apply", "-f", "app.yaml", "--name", "Bad_Name", "--kubeconfig", "kubeconfig"}, usage, `--name "Bad_Name": not a valid RayService name`},
		{[]string{"render", "-f", "app.yaml", "--name", long}, usage, "at most 47 characters"},
		{[]string{"apply", "-f", "app.yaml", "--name", long, "--kubeconfig", "kubeconfig"}, usage, "at most 47 characters"},
		{[]string{"render", "-f", "plan.json", "--name", "9lives"}, usage, "not a valid RayCluster name"},
		{[]string{"render", "-f", "app-huge.yaml"}, invalid, "larger than"},
		{[]string{"apply", "-f", "app-huge.yaml", "--kubeconfig", "kubeconfig"}, invalid, "larger than"},
		{[]string{"serve", "deploy", "-f", "app-typo.yaml", a}, invalid, "num_replica"},
		{[]string{"serve", "deploy", "-f", "app-bad-topology.yaml", a}, invalid, "topology"},

		// Compiled plans.
		{[]string{"render", "-f", "plan-version.json"}, invalid, "apiVersion"},
		{[]string{"render", "-f", "plan-typo.json"}, invalid, "slicess"},
		{[]string{"render", "-f", "plan-kind.json"}, invalid, "kind"},
		{[]string{"render", "-f", "plan-report.json"}, invalid, "plan.apiVersion"},
		{[]string{"render", "-f", "plan-not-json.json"}, invalid, "plan-not-json.json"},
		{[]string{"apply", "-f", "plan-version.json", "--kubeconfig", "kubeconfig"}, invalid, "apiVersion"},

		// Data pipeline files.
		{[]string{"data", "plan", "-f", "missing.yaml"}, invalid, "missing.yaml"},
		{[]string{"data", "plan", "-f", "data-typo.yaml"}, invalid, `did you mean "batchSize"`},
		{[]string{"data", "plan", "-f", "data-ragged.yaml"}, invalid, "iter.ragged"},
		{[]string{"data", "plan", "-f", "data-negative.yaml"}, invalid, "iter.batchSize"},
		{[]string{"data", "plan", "-f", "data-no-workers.yaml"}, invalid, "hosts.workers"},
		{[]string{"data", "plan", "-f", "data-two-sources.yaml"}, invalid, "source"},
		{[]string{"data", "plan", "-f", "data-string-batch.yaml"}, invalid, "iter.batchSize"},
		{[]string{"data", "plan", "-f", "data-missing-parquet.yaml"}, invalid, "source.readParquet.paths"},
		{[]string{"data", "plan", "-f", "data-not-parquet.yaml"}, invalid, "source.readParquet.paths"},
		{[]string{"data", "plan", "-f", "data-empty-dir.yaml"}, invalid, "source.readParquet.paths"},

		// Operations on a cluster that is not there fail fast.
		{[]string{"job", "list", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "status", "x", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "logs", "x", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "logs", "x", "--timeout", "1s", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "stop", "x", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "wait", "x", a}, invalid, "127.0.0.1:1"},
		{[]string{"job", "submit", a, "--", "ls"}, invalid, "127.0.0.1:1"},
		{[]string{"serve", "status", "chat", a}, invalid, "127.0.0.1:1"},
		{[]string{"serve", "wait", "chat", a}, invalid, "127.0.0.1:1"},
		{[]string{"serve", "delete", "chat", a}, invalid, "127.0.0.1:1"},
		{[]string{"serve", "deploy", "-f", "app.yaml", a}, invalid, "127.0.0.1:1"},
		{[]string{"top", "--once", a}, invalid, "127.0.0.1:1"},
		{[]string{"profile", "--job", "x", "-o", "logs", a}, invalid, "127.0.0.1:1"},
		{[]string{"apply", "-f", "app.yaml", "--kubeconfig", "kubeconfig"}, invalid, "127.0.0.1:1"},
		{[]string{"apply", "-f", "app.yaml", "--kubeconfig", "no-kubeconfig"}, invalid, "kubeconfig"},
	}
	if len(cases) < 60 {
		t.Fatalf("%d cases, want at least 60", len(cases))
	}
	env := []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig")}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			// A hang is a failure: every case ends well within this.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, c.args...)
			cmd.Dir, cmd.Env = dir, env
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatalf("did not end within the deadline; stderr %q", stderr.String())
			}
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.names) {
				t.Errorf("stderr %q does not name %q", stderr.String(), c.names)
			}
			// serve wait shows the application's links as progress before
			// it waits; every other bad invocation prints nothing on stdout.
			progress := len(c.args) > 1 && c.args[0] == "serve" && c.args[1] == "wait"
			if stdout.Len() > 0 && !progress {
				t.Errorf("stdout %q, want nothing on an error", stdout.String())
			}
			for _, s := range []string{"goroutine ", "panic:", "internal error"} {
				if strings.Contains(stdout.String()+stderr.String(), s) {
					t.Errorf("output holds %q:\n%s\n%s", s, stdout.String(), stderr.String())
				}
			}
		})
	}
}
