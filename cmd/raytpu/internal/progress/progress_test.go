package progress_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// clock is a fake clock the script moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// script runs a job-like wait on p: a link, an upload, two states, replica
// counts; then calls mid, then ends the wait.
func script(p *progress.Printer, c *clock, mid func()) {
	step := func(d time.Duration) { c.t = c.t.Add(d) }
	p.Link("Job", "http://127.0.0.1:8265/#/jobs/raytpu_abc")
	p.State("UPLOADING")
	for i := int64(0); i <= 4; i++ {
		step(700 * time.Millisecond)
		p.Bytes("working_dir", i*12<<20, 48<<20)
	}
	step(300 * time.Millisecond)
	p.State("PENDING")
	step(3200 * time.Millisecond)
	p.Tick()
	p.State("RUNNING")
	for _, n := range []int{0, 1, 1, 2} {
		step(time.Second)
		p.Count("replicas ready", n, 4)
	}
	step(1500 * time.Millisecond)
	p.Tick()
	mid()
	step(2 * time.Second)
	p.Done("SUCCEEDED")
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)} }

func TestPlainLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	c := newClock()
	p := progress.New(&b, progress.WithClock(c.now))
	if p.Terminal() {
		t.Fatal("a bytes.Buffer detected as a terminal")
	}
	script(p, c, func() {})
	golden.Assert(t, "plain.txt", b.Bytes())
}

// TestTerminalInTmux runs the script in a real terminal (a tmux pane) and
// reads the screen back: mid-wait, the finished states above one status
// line rewritten in place; at the end, no status line.
func TestTerminalInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("this test needs tmux (apt-get install tmux): %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	cmd := fmt.Sprintf("env %s=%s %s -test.run='^TestHelperScript$'; sleep 600", envDemo, dir, os.Args[0])
	run("new-session", "-d", "-x", "100", "-y", "24", "-s", "demo", cmd)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

	screen := func(until string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := run("capture-pane", "-p", "-t", "demo")
			if strings.Contains(s, until) {
				return strings.TrimRight(s, "\n") + "\n"
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", until, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	golden.Assert(t, "tmux-mid.txt", []byte(screen("replicas ready 2/4")))
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "tmux-done.txt", []byte(screen("SUCCEEDED in")))
}

const envDemo = "RAYTPU_PROGRESS_SCRIPT_DIR"

// TestHelperScript is the program TestTerminalInTmux runs in the pane; run
// by go test it only checks that it was not asked to.
func TestHelperScript(t *testing.T) {
	dir := os.Getenv(envDemo)
	if dir == "" {
		return
	}
	c := newClock()
	p := progress.New(os.Stdout, progress.WithClock(c.now))
	if !p.Terminal() {
		fmt.Println("NOT A TERMINAL")
	}
	script(p, c, func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	os.Exit(0) // no test summary on the screen
}

// TestDetailAndLine: a detail is printed when it changes (not when it
// repeats), a line always; on a terminal Done leaves out a last state
// that is its own message.
func TestDetailAndLine(t *testing.T) {
	t.Parallel()
	c := newClock()
	var b bytes.Buffer
	p := progress.New(&b, progress.WithClock(c.now))
	p.State("DEPLOYING")
	p.Detail("replicas running: A 0/2, B 1/1")
	p.Detail("replicas running: A 0/2, B 1/1")
	c.t = c.t.Add(2 * time.Second)
	p.Line("a warning")
	p.Detail("replicas running: A 2/2, B 1/1")
	p.Done("DEPLOYING")
	want := `2026-11-30T18:00:00Z DEPLOYING
2026-11-30T18:00:00Z replicas running: A 0/2, B 1/1
2026-11-30T18:00:02Z a warning
2026-11-30T18:00:02Z replicas running: A 2/2, B 1/1
2026-11-30T18:00:02Z DEPLOYING in 2s
`
	if b.String() != want {
		t.Errorf("plain:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	p = progress.New(&b, progress.WithTerminal(true), progress.WithClock(c.now))
	p.State("RUNNING")
	p.Done("RUNNING")
	if got, want := b.String(), "\r\x1b[K> RUNNING      0s  (total 0s)\r\x1b[KRUNNING in 0s\n"; got != want {
		t.Errorf("terminal: %q, want %q", got, want)
	}
}
