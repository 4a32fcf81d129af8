package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/silentserver"
)

// TestCtrlCEnds sends the built command SIGINT while it waits on a server
// that never answers: it ends within a second, exit 1, saying it was
// interrupted.
func TestCtrlCEnds(t *testing.T) {
	bin := buildRaytpu(t)
	hang := silentserver.Start(t).URL
	for _, args := range [][]string{
		{"job", "wait", "x", "--address", hang},
		{"serve", "status", "chat", "--timeout", "0", "--address", hang},
		{"top", "--address", hang},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), bin, args...)
			// GORACE: a race-built binary otherwise sleeps 1s at exit.
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Time to start and install its signal handler, under load too.
			time.Sleep(2 * time.Second)
			sent := time.Now()
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 10s after Ctrl-C; stderr %q", stderr.String())
			}
			if took := time.Since(sent); took > 5*time.Second {
				t.Errorf("ended %v after Ctrl-C, want within 5s (the command stops within a second; the rest is slack for a loaded machine)", took)
			}
			// top refreshing ends quietly with 0; the others fail.
			if args[0] != "top" && cmd.ProcessState.ExitCode() != 1 {
				t.Errorf("exit %d, want 1; stderr %q", cmd.ProcessState.ExitCode(), stderr.String())
			}
		})
	}
}
