package datamodel_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
)

// crossRay is the one crosscheck_ray.py process of the package's tests:
// the first test that sends it a request starts it, every test sends its
// cases to it in turn, and TestMain ends it. It holds one local Ray
// instance (ray.init) for all of them: each ray.init is a full head
// start, which the tests' cases do not need apart.
var crossRay rayProcess

func TestMain(m *testing.M) {
	code := m.Run()
	if err := crossRay.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck_ray.py:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// rayProcess runs testdata/crosscheck_ray.py and talks to it: a request
// is one JSON line on its stdin; the answer is its stdout's lines up to
// {"done": MODE, "error": ...}.
type rayProcess struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Scanner
	stderr *syncbuf.Buffer
	err    error // why the process cannot answer: it did not start, or it ended
}

// request asks the script to run mode's cases (with the request's other
// keys in extra) and hands every output line to line (Ray and JAX log
// lines included; line skips what is not JSON).
func (p *rayProcess) request(t *testing.T, py, mode string, cases any, extra map[string]any, line func([]byte)) error {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil && p.err == nil {
		p.err = p.startReady(t, py)
	}
	if p.err != nil {
		return p.err
	}
	req := map[string]any{"mode": mode, "cases": cases}
	for k, v := range extra {
		req[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return p.ended(fmt.Errorf("sending the %s request: %v", mode, err))
	}
	for p.stdout.Scan() {
		var end struct {
			Done  *string `json:"done"`
			Error string  `json:"error"`
		}
		if json.Unmarshal(p.stdout.Bytes(), &end) == nil && end.Done != nil {
			t.Logf("crosscheck_ray.py answered the %s request in %v", mode, time.Since(start).Round(time.Second))
			if end.Error != "" {
				return fmt.Errorf("crosscheck_ray.py, %s request:\n%s", mode, end.Error)
			}
			return nil
		}
		line(p.stdout.Bytes())
	}
	return p.ended(fmt.Errorf("no answer to the %s request: %v", mode, p.stdout.Err()))
}

// startTries is how many times startReady starts the script when Ray's
// own startup gives up: ray.init waits a fixed 30 s (not configurable in
// Ray 2.60) for its raylet to register with its GCS, which a loaded
// machine can miss.
const startTries = 3

// startReady starts the script and waits for its ready line, printed once
// ray.init has returned. A start that fails with Ray's startup timeout is
// tried again in a new process (the failed one's Ray processes end with
// it); any other failure is returned.
func (p *rayProcess) startReady(t *testing.T, py string) error {
	for try := 1; ; try++ {
		if err := p.start(py); err != nil {
			return err
		}
		for p.stdout.Scan() {
			var ready struct {
				Ready bool `json:"ready"`
			}
			if json.Unmarshal(p.stdout.Bytes(), &ready) == nil && ready.Ready {
				return nil
			}
		}
		err := p.ended(fmt.Errorf("ended before Ray was ready: %v", p.stdout.Err()))
		if try == startTries || !strings.Contains(p.stderr.String(), "timed out during startup") {
			return err
		}
		t.Logf("try %d of %d to start crosscheck_ray.py's Ray instance: %v", try, startTries, err)
		p.err = nil
	}
}

func (p *rayProcess) start(py string) error {
	cmd := exec.Command(py, filepath.Join("testdata", "crosscheck_ray.py"))
	cmd.Env = append(os.Environ(), "JAX_PLATFORMS=cpu", "RAY_AUTH_MODE=disabled",
		"XLA_FLAGS=--xla_force_host_platform_device_count="+strconv.Itoa(crossDevices),
		// The instance lives as long as the package's tests, and every
		// Ray worker it starts (a SplitCoordinator per streaming_split,
		// one per device count, the read tasks' pool) adds log files.
		// Its log monitor lists the log directory on every 0.1 s pass
		// below RAY_LOG_MONITOR_MANY_FILES_THRESHOLD (1000) files; at 0 it
		// lists every 0.5 s and still reads new lines every pass, as
		// internal/raycluster's nodes do. Its workers run at nice 0, as
		// internal/raycluster's do (Ray's default worker_niceness, 15,
		// lets any other busy process on the machine starve them).
		"RAY_LOG_MONITOR_MANY_FILES_THRESHOLD=0", "RAY_worker_niceness=0")
	// Ray's own processes share the script's fate (Ray's kernel fate
	// sharing); the script shares the test binary's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.stderr = &syncbuf.Buffer{}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s crosscheck_ray.py: %v", py, err)
	}
	p.cmd, p.stdin = cmd, in
	p.stdout = bufio.NewScanner(out)
	p.stdout.Buffer(nil, 1<<20)
	return nil
}

// ended records that the process cannot answer any more: it waits for
// its end and returns (and keeps) an error with its status and stderr's
// tail.
func (p *rayProcess) ended(why error) error {
	p.stdin.Close()
	p.kill(2 * time.Minute)
	p.err = fmt.Errorf("crosscheck_ray.py: %v (%v)\n%s", why, p.cmd.ProcessState, tail([]byte(p.stderr.String())))
	return p.err
}

// kill waits up to grace for the process to end, then kills it.
func (p *rayProcess) kill(grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(grace):
		p.cmd.Process.Kill()
		return errors.Join(errors.New("still running after stdin closed; killed"), <-done)
	}
}

// stop closes the script's stdin, which shuts its Ray instance down, and
// waits for it to end.
func (p *rayProcess) stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.err != nil {
		return nil
	}
	p.stdin.Close()
	if err := p.kill(2 * time.Minute); err != nil {
		return fmt.Errorf("%v\n%s", err, tail([]byte(p.stderr.String())))
	}
	return nil
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}
