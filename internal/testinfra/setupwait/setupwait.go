// Package setupwait lets a test wait for a setup script that make test
// runs beside the tests: scripts/setup-kube.sh (the control plane's build)
// and scripts/setup-venv-llm.sh (the LLM virtualenv) each keep a marker
// file holding their process id while they run, and the tests that need
// what they make wait for them instead of failing on a half-made cache.
package setupwait

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Wait returns once no process named by marker runs: at once when there
// is no marker, or it names a process that has exited, else when that
// process exits, saying once on stderr what it waits for (script, the
// script's name and what it makes). It fails after max.
func Wait(marker, script string, max time.Duration) error {
	start := time.Now()
	said := false
	for {
		pid, running := Running(marker)
		if !running {
			if said {
				fmt.Fprintf(os.Stderr, "setupwait: %s finished after %v of waiting\n", script, time.Since(start).Round(time.Second))
			}
			return nil
		}
		if !said {
			fmt.Fprintf(os.Stderr, "setupwait: waiting for %s (pid %d)\n", script, pid)
			said = true
		}
		if time.Since(start) > max {
			return fmt.Errorf("setupwait: %s (pid %d) still running after %v", script, pid, max)
		}
		time.Sleep(2 * time.Second)
	}
}

// Running reads the marker's process id and says whether that process
// runs. A marker left by a script that was killed names no live process.
func Running(marker string) (int, bool) {
	b, err := os.ReadFile(marker)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return pid, false
	}
	// Signal 0 checks that the process exists without signalling it.
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, syscall.EPERM) {
		return pid, false
	}
	return pid, !zombie(pid)
}

// zombie says whether process pid has exited and waits for its parent to
// reap it (state Z in /proc/<pid>/stat, where there is a /proc). A script
// removes its marker when it exits; one killed before it could leaves a
// marker naming such a process until make reaps it.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
