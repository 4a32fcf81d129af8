package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// envCLIArgs names a file whose command line (one argument a line) the
// test binary runs instead of the tests: TestHelperCLI below.
const envCLIArgs = "RAYTPU_CLI_TEST_ARGS"

// TestJobSubmitInTmuxOnRealRay runs `raytpu job submit --wait` against real Ray in
// a tmux pane, a real terminal, and reads the screen back: while the job
// runs, the links above one status line that is redrawn in place (the
// same screen row, a moving elapsed time, no new rows); at the end the
// finished states, each with its time, and the final state line.
func TestJobSubmitInTmuxOnRealRay(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("this test needs tmux (apt-get install tmux): %v", err)
	}
	c := realTPUCluster(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	args := []string{"job", "submit", "--address", c.DashboardURL, "--submission-id", "raytpu_progress_tmux", "--wait",
		"--", "python", "-c", "'import time; time.sleep(6)'"}
	argFile := filepath.Join(dir, "args")
	if err := os.WriteFile(argFile, []byte(strings.Join(args, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("env %s=%s %s -test.run='^TestHelperCLI$'; sleep 600", envCLIArgs, argFile, os.Args[0])
	tm("new-session", "-d", "-x", "160", "-y", "30", "-s", "cli", cmd)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

	capture := func() []string {
		return strings.Split(strings.TrimRight(tm("capture-pane", "-p", "-t", "cli"), "\n"), "\n")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	await := func(what string, ok func([]string) bool) []string {
		t.Helper()
		for {
			s := capture()
			if ok(s) {
				return s
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the screen never showed %s:\n%s", what, strings.Join(s, "\n"))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	status := regexp.MustCompile(`^> RUNNING +((?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s))  \(total (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)\)$`)
	running := func(s []string) bool { return status.MatchString(s[len(s)-1]) }

	first := await("the RUNNING status line", running)
	time.Sleep(1500 * time.Millisecond)
	second := await("the RUNNING status line again", running)
	if len(second) != len(first) {
		t.Errorf("the status line was not redrawn in place: %d rows, then %d:\n%s\n---\n%s", len(first), len(second), strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
	e1 := status.FindStringSubmatch(first[len(first)-1])[1]
	e2 := status.FindStringSubmatch(second[len(second)-1])[1]
	if e1 == e2 {
		t.Errorf("the elapsed time did not move in 1.5s: %q, then %q", first[len(first)-1], second[len(second)-1])
	}
	jobLink := "job: " + c.DashboardURL + "/#/jobs/raytpu_progress_tmux"
	if first[0] != jobLink || first[1] != "metrics: "+c.DashboardURL+"/#/metrics" {
		t.Errorf("the screen does not start with the links:\n%s", strings.Join(first, "\n"))
	}

	final := await("the final state", func(s []string) bool { return strings.HasPrefix(s[len(s)-1], "SUCCEEDED in ") })
	want := []*regexp.Regexp{
		regexp.MustCompile("^" + regexp.QuoteMeta(jobLink) + "$"),
		regexp.MustCompile(`^metrics: `),
		regexp.MustCompile(`^  PENDING +(?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`),
		regexp.MustCompile(`^  RUNNING +(?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`),
		regexp.MustCompile(`^SUCCEEDED in (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`),
	}
	if len(final) != len(want) {
		t.Fatalf("final screen has %d rows, want %d (no status line left):\n%s", len(final), len(want), strings.Join(final, "\n"))
	}
	for i, re := range want {
		if !re.MatchString(final[i]) {
			t.Errorf("row %d %q does not match %q", i, final[i], re)
		}
	}
	t.Logf("final screen:\n%s", strings.Join(final, "\n"))
}

// TestHelperCLI is the program TestJobSubmitInTmuxOnRealRay runs in its pane: the
// raytpu command on the pane's terminal. Run by go test it only checks
// that it was not asked to.
func TestHelperCLI(t *testing.T) {
	file := os.Getenv(envCLIArgs)
	if file == "" {
		return
	}
	args, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	code := cli.Main(context.Background(), strings.Split(string(args), "\n"), os.Stdout, os.Stderr)
	os.Exit(code) // no test summary on the screen
}
