package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// stamped is a plain progress line: an RFC 3339 UTC timestamp, then text.
var stamped = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (.*)$`)

// plainLines checks that every line of out is timestamped and returns the
// lines without their timestamps.
func plainLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := stamped.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %q has no timestamp; output:\n%s", l, out)
			continue
		}
		lines = append(lines, m[1])
	}
	return lines
}

// TestJobSubmitWaitPlainOnRealRay submits a job with a working directory to real
// Ray with output that is not a terminal: timestamped lines for the
// upload's bytes, the job's links, each state with the time spent in the
// one before, and the final state; then `job wait` on the finished job.
func TestJobSubmitWaitPlainOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("print('hello from', __file__)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), []string{"job", "submit", "--address", c.DashboardURL, "--working-dir", dir,
		"--submission-id", "raytpu_progress_plain", "--wait", "--", "python", "hello.py"}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("exit %d; stderr: %s\nstdout: %s", code, errb.String(), out.String())
	}
	lines := plainLines(t, out.String())
	want := []*regexp.Regexp{
		regexp.MustCompile(`^UPLOADING$`),
		regexp.MustCompile(`^working_dir 0 MiB/0 MiB 100%$`), // 30 bytes: rounded to 0 MiB
		regexp.MustCompile(`^job: ` + regexp.QuoteMeta(c.DashboardURL+"/#/jobs/raytpu_progress_plain") + `$`),
		regexp.MustCompile(`^metrics: ` + regexp.QuoteMeta(c.DashboardURL+"/#/metrics") + `$`),
		regexp.MustCompile(`^(PENDING|RUNNING) \(after (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s) in UPLOADING\)$`),
		regexp.MustCompile(`^SUCCEEDED \(after (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s) in (PENDING|RUNNING)\)$`),
		regexp.MustCompile(`^SUCCEEDED in (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`),
	}
	matchInOrder(t, lines, want)

	out.Reset()
	code = cli.Main(t.Context(), []string{"job", "wait", "raytpu_progress_plain", "--address", c.DashboardURL}, &out, &errb)
	if code != cli.ExitOK {
		t.Fatalf("job wait: exit %d; stderr: %s", code, errb.String())
	}
	matchInOrder(t, plainLines(t, out.String()), []*regexp.Regexp{
		regexp.MustCompile(`^job: .*/#/jobs/raytpu_progress_plain$`),
		regexp.MustCompile(`^SUCCEEDED$`),
		regexp.MustCompile(`^SUCCEEDED in `),
	})
}

// TestJobWaitFailedOnRealRay: a job that fails exits 1 after its final state and
// Ray's message.
func TestJobWaitFailedOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	var out, errb bytes.Buffer
	code := cli.Main(t.Context(), []string{"job", "submit", "--address", c.DashboardURL, "--wait", "--", "python", "-c", "'import sys; sys.exit(3)'"}, &out, &errb)
	if code != cli.ExitInvalid {
		t.Fatalf("exit %d, want %d; stdout: %s", code, cli.ExitInvalid, out.String())
	}
	if !strings.Contains(errb.String(), "ended FAILED") {
		t.Errorf("stderr %q does not say the job FAILED", errb.String())
	}
	matchInOrder(t, plainLines(t, out.String()), []*regexp.Regexp{
		regexp.MustCompile(`^job: .*/#/jobs/raytpu_`),
		regexp.MustCompile(`^FAILED \(after `),
		regexp.MustCompile(`exit code 3|exited with code 3|failed`),
		regexp.MustCompile(`^FAILED in `),
	})
}

// matchInOrder checks that each pattern matches a line, in order.
func matchInOrder(t *testing.T, lines []string, want []*regexp.Regexp) {
	t.Helper()
	i := 0
	for _, l := range lines {
		if i < len(want) && want[i].MatchString(l) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no line matches %q (after the earlier patterns); lines:\n%s", want[i], strings.Join(lines, "\n"))
	}
}
