package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/silentserver"
)

// TestCommandLineRule runs the reproductions of the command line's one
// rule: a bad flag value exits 2 naming the flag as typed, bad file
// content exits 1 naming the field in the file's spelling, both before
// any request and with nothing on stdout.
// deadlineSlack is how long past its deadline a command may end in these
// tests: the commands stop at once, but a loaded machine (the suite beside
// other work) delays a test binary by seconds. A server that never answers
// held a command for minutes before.
const deadlineSlack = 5 * time.Second

func TestCommandLineRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	outDir := filepath.Join(dir, "profiles")
	aFile := write("a-file", "x")
	dataNeg := write("data-neg.yaml", "source: {range: {n: -1}}\niter: {batchSize: 10}\nhosts: {workers: 2}\n")
	// What `raytpu plan -o json` writes without --name.
	planOut, errOut, code := run(t, "plan", "--accelerator", "v6e", "--topology", "4x4", "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("plan -o json: exit %d: %s", code, errOut)
	}
	unnamed := write("unnamed.json", planOut)
	hang := silentserver.Start(t).URL // nothing may be sent to it: input is checked first
	// A FIFO with no writer: opening it to read would block forever.
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}

	const usage, invalid = cli.ExitUsage, cli.ExitInvalid
	cases := []struct {
		args  []string
		code  int
		names string
	}{
		{[]string{"plan", "--topology", "4x4"}, usage, "--accelerator: Required value"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "-2"}, usage, "--num-slices -2: want 1 or more slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--num-slices", "0"}, usage, "--num-slices 0: want 1 or more slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "16x16x16"}, usage, "--topology"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--resources-per-bundle", "TPU=4"}, usage, "--resources-per-bundle"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "bogus"}, usage, "--cluster"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--autoscaler-version", "v3"}, usage, "--autoscaler-version"},
		{[]string{"plan", "-f", "testdata/apps/chat.yaml", "--autoscaler-version", "v3"}, usage, "--autoscaler-version"},
		{[]string{"plan", "-f", "testdata/apps/chat.yaml", "--num-slices", "2"}, usage, "--num-slices"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster", "1100*v6e-16", "-o", "svg"}, usage, "-o svg draws at most"},
		{[]string{"slice", "v6e", "4x4", "--chips-per-host", "3"}, usage, "--chips-per-host"},
		{[]string{"profile", "--target", "not a host", "-o", outDir}, usage, "--target"},
		{[]string{"profile", "--target", "127.0.0.1:99999", "-o", outDir}, usage, "--target"},
		{[]string{"profile", "--target", "127.0.0.1:1", "--duration", "-2s", "-o", outDir}, usage, "--duration"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", aFile}, usage, "--out-dir"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", filepath.Join(aFile, "x")}, usage, "--out-dir"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", outDir, "--run", "a/b"}, usage, "--run"},
		{[]string{"profile", "--target", "127.0.0.1:1", "-o", outDir, "--run", ".."}, usage, "--run"},
		{[]string{"profile", "--job", "x", "-o", outDir, "--run", "a/b", "--address", hang}, usage, "--run"},
		{[]string{"profile", "--job", "x", "-o", outDir, "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"job", "list", "--address", "http://127.0.0.1:99999"}, usage, "--address"},
		{[]string{"job", "list", "--address", "127.0.0.1:0"}, usage, "--address"},
		{[]string{"job", "list", "--address", "ftp://127.0.0.1:8265"}, usage, "--address"},
		{[]string{"job", "list", "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"job", "status", "x", "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"serve", "status", "x", "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"serve", "delete", "x", "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"top", "--once", "--timeout", "-1s", "--address", hang}, usage, "--timeout"},
		{[]string{"serve", "deploy", "-f", "testdata/apps/chat.yaml", "--stuck-after", "1m", "--address", hang}, usage, "--stuck-after needs --wait"},
		{[]string{"job", "submit", "--working-dir", "/nonexistent", "--address", hang, "--", "ls"}, usage, "--working-dir"},
		{[]string{"job", "submit", "--working-dir", aFile, "--address", hang, "--", "ls"}, usage, "--working-dir"},
		{[]string{"data", "plan", "-f", dataNeg}, invalid, "pipeline.source.range.n"},
		{[]string{"render", "-f", unnamed}, invalid, "plan.name: Required value"},
		{[]string{"render", "-f", unnamed}, invalid, "--name"},
		{[]string{"render", "-f", fifo}, invalid, "not a regular file"},
		{[]string{"plan", "-f", fifo}, invalid, "not a regular file"},
		{[]string{"data", "plan", "-f", fifo}, invalid, "not a regular file"},
		{[]string{"serve", "deploy", "-f", fifo, "--address", hang}, invalid, "not a regular file"},
		{[]string{"plan", "--accelerator", "v6e", "--topology", "4x4", "--cluster-file", fifo}, invalid, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if !strings.Contains(errOut, c.names) {
				t.Errorf("stderr %q does not name %q", errOut, c.names)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing on an error", out)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestWaitsEnd runs every command that talks to a server against one that
// accepts connections and never answers: each ends by its --timeout plus
// at most a second, exit 1, saying it gave up after --timeout.
func TestWaitsEnd(t *testing.T) {
	t.Parallel()
	hang := silentserver.Start(t).URL
	outDir := filepath.Join(t.TempDir(), "profiles")
	const timeout = time.Second
	cases := []struct {
		args []string
		// progress: the command shows progress on stdout before it waits
		// (dashboard links), which stays there when it gives up.
		progress bool
	}{
		{[]string{"job", "list"}, false},
		{[]string{"job", "status", "x"}, false},
		{[]string{"job", "logs", "x"}, false},
		{[]string{"job", "logs", "-f", "x"}, false},
		{[]string{"job", "stop", "x"}, false},
		{[]string{"job", "wait", "x"}, false},
		{[]string{"job", "submit", "--", "ls"}, false},
		{[]string{"job", "submit", "--wait", "--", "ls"}, false},
		{[]string{"serve", "status", "chat"}, false},
		{[]string{"serve", "delete", "chat"}, false},
		{[]string{"serve", "wait", "chat"}, true},
		{[]string{"serve", "deploy", "-f", "testdata/apps/chat.yaml", "--wait"}, true},
		{[]string{"serve", "deploy", "-f", "testdata/apps/chat.yaml"}, true},
		{[]string{"top", "--once"}, false},
		{[]string{"profile", "--job", "x", "-o", outDir}, false},
		{[]string{"profile", "--app", "chat", "--deployment", "LLM", "-o", outDir}, false},
	}
	for _, c := range cases {
		args := append(c.args, "--address", hang, "--timeout", timeout.String())
		if i := indexOf(c.args, "--"); i >= 0 {
			args = append(append(append([]string{}, c.args[:i]...), "--address", hang, "--timeout", timeout.String()), c.args[i:]...)
		}
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, errOut, code := run(t, args...)
			took := time.Since(start)
			if code != cli.ExitInvalid {
				t.Errorf("exit %d, want %d; stderr %q", code, cli.ExitInvalid, errOut)
			}
			if took > timeout+deadlineSlack {
				t.Errorf("took %v, want at most --timeout %v plus %v", took, timeout, deadlineSlack)
			}
			if !strings.Contains(errOut, "gave up after --timeout 1s") {
				t.Errorf("stderr %q does not say it gave up after --timeout", errOut)
			}
			if !c.progress && out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestInterruptEnds: a command waiting on a server that never answers,
// with no --timeout, ends within a second of its context's cancellation
// (Ctrl-C at the root), saying it was interrupted.
func TestInterruptEnds(t *testing.T) {
	t.Parallel()
	hang := silentserver.Start(t).URL
	for _, args := range [][]string{
		{"job", "wait", "x", "--address", hang},
		{"job", "logs", "-f", "x", "--address", hang},
		{"serve", "wait", "chat", "--timeout", "0", "--address", hang},
		{"job", "list", "--timeout", "0", "--address", hang},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(300*time.Millisecond, cancel)
			var out, errb bytes.Buffer
			start := time.Now()
			code := cli.Main(ctx, args, &out, &errb)
			if took := time.Since(start); took > 300*time.Millisecond+deadlineSlack {
				t.Errorf("ended %v after the start, want within %v of the interrupt at 300ms", took, deadlineSlack)
			}
			if code != cli.ExitInvalid || !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("exit %d, stderr %q; want 1 and interrupted", code, errb.String())
			}
		})
	}
}

// TestTerminalSafeOutput: names holding BEL, ESC and NUL reach neither
// stdout nor stderr raw, and an argument of 100 KB is not echoed in full.
func TestTerminalSafeOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yaml")
	body := "name: \"chat\\a\\e\\0x\"\nimport_path: chat.app:build\ndeployments:\n  - name: \"LLM\\e[31m\"\n    accelerator_config: {accelerator_type: v4, topology: 2x2x2}\n"
	if err := os.WriteFile(app, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 100<<10)
	for _, args := range [][]string{
		{"plan", "-f", app},
		{"plan", "-f", app, "-o", "json"},
		{"plan", "--accelerator", "v6e", "--topology", "4x4", "--name", "pg\a\x1b\x00"},
		{"slice", "v6e", big},
		{"slice", big, "4x4"},
		{"catalog", big},
		{"slice", "v6e\x1b[2J", "4x4"},
	} {
		t.Run(strings.Join(args, " ")[:min(40, len(strings.Join(args, " ")))], func(t *testing.T) {
			t.Parallel()
			out, errOut, _ := run(t, args...)
			for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
				if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }); i >= 0 {
					t.Errorf("%s holds a raw control character at %d: %q", name, i, s[max(0, i-40):min(len(s), i+40)])
				}
			}
			if len(errOut) > 4<<10 {
				t.Errorf("stderr is %d bytes: an argument echoed in full", len(errOut))
			}
		})
	}
}

// TestApplyWaitEnds: apply against an apiserver that accepts connections
// and never answers ends by --timeout plus at most a second, with or
// without --wait.
func TestApplyWaitEnds(t *testing.T) {
	t.Parallel()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	body := `apiVersion: v1
kind: Config
clusters:
  - name: hang
    cluster: {server: "` + silentserver.Start(t).URL + `"}
users:
  - name: hang
    user: {}
contexts:
  - name: hang
    context: {cluster: hang, user: hang, namespace: default}
current-context: hang
`
	if err := os.WriteFile(kubeconfig, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"apply", "-f", "testdata/apps/chat.yaml", "--kubeconfig", kubeconfig, "--timeout", "1s"},
		{"apply", "-f", "testdata/apps/chat.yaml", "--kubeconfig", kubeconfig, "--timeout", "1s", "--wait"},
	} {
		t.Run(strings.Join(args[4:], " "), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, errOut, code := run(t, args...)
			if took := time.Since(start); took > time.Second+deadlineSlack {
				t.Errorf("took %v, want at most --timeout 1s plus %v", took, deadlineSlack)
			}
			if code != cli.ExitInvalid || !strings.Contains(errOut, "gave up after --timeout 1s") {
				t.Errorf("exit %d, stderr %q; want 1 and gave up after --timeout", code, errOut)
			}
		})
	}
}
