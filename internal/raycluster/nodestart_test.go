package raycluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTracebackReason checks a failed `ray start` is reported only once
// Python has written the traceback's exception line, so the error never
// carries a traceback cut off in the middle.
func TestTracebackReason(t *testing.T) {
	const head = "2026-12-06 INFO scripts.py:1092 -- starting\n" +
		"Traceback (most recent call last):\n" +
		"  File \"ray/_private/parameter.py\", line 435, in _check_usage\n" +
		"    assert \"CPU\" not in self.resources, build_error(\"CPU\", \"num_cpus\")\n"
	const reason = "AssertionError: {'CPU': 3} -> `CPU` cannot be a custom resource. Use `ray start --num-cpus=1`"
	for _, tc := range []struct {
		name, log, want string
		ok              bool
	}{
		{"no traceback", "2026-12-06 INFO scripts.py:1092 -- starting\n", "", false},
		{"header only", "Traceback (most recent call last):\n", "", false},
		{"frames only", head, "", false},
		{"exception line half written", head + reason[:20], "", false},
		{"complete", head + reason + "\n", reason, true},
		{"tab-indented frame", "Traceback (most recent call last):\n\tat x\nValueError: bad\n", "ValueError: bad", true},
		{"chained: the last traceback counts", head + reason + "\n\nDuring handling of the above exception, another exception occurred:\n\n" +
			"Traceback (most recent call last):\n  File \"x\", line 1\nRuntimeError: outer\n", "RuntimeError: outer", true},
		{"chained, second still being written", head + reason + "\n\nDuring handling of the above exception, another exception occurred:\n\n" +
			"Traceback (most recent call last):\n  File \"x\", line 1\n", "", false},
	} {
		got, ok := tracebackReason([]byte(tc.log))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: tracebackReason = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestWaitStartedTraceback checks the two ways waitStarted ends on a
// traceback: with its exception line when the process exits right after
// writing it, and with the log's last line when the traceback stays cut
// off longer than tracebackGrace while the process lingers.
func TestWaitStartedTraceback(t *testing.T) {
	const frames = "Traceback (most recent call last):\n  File \"scripts.py\", line 923, in start\n"
	newProc := func(log string) *proc {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "ray-start.log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		return &proc{Name: "w0", Dir: dir, done: make(chan struct{})}
	}
	c := &Cluster{}

	t.Run("exit completes the traceback", func(t *testing.T) {
		p := newProc(frames)
		go func() {
			time.Sleep(300 * time.Millisecond)
			f, err := os.OpenFile(filepath.Join(p.Dir, "ray-start.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err == nil {
				f.WriteString("AssertionError: use --num-cpus\n")
				f.Close()
			}
			close(p.done)
		}()
		err := c.waitStarted(t.Context(), p)
		if err == nil || !strings.Contains(err.Error(), "ray start for w0 failed: AssertionError: use --num-cpus") {
			t.Fatalf("waitStarted = %v; want the exception line", err)
		}
	})

	t.Run("a cut-off traceback ends after the grace", func(t *testing.T) {
		old := tracebackGrace
		tracebackGrace = 500 * time.Millisecond
		defer func() { tracebackGrace = old }()
		p := newProc(frames)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		err := c.waitStarted(ctx, p)
		if err == nil || !strings.Contains(err.Error(), `ray start for w0 failed:   File "scripts.py", line 923, in start`) {
			t.Fatalf("waitStarted = %v; want the log's last line", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("waitStarted waited out its context: %v", err)
		}
	})
}
