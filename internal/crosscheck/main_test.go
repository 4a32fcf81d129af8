package crosscheck

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/sim"
)

// raySpec is the fleet both sides hold; simSpec adds Ray's head node, a
// CPU-only node with one CPU.
const (
	raySpec = "2*v4-16{cpu=1},v4-8{cpu=1}"
	simSpec = raySpec + ",cpu:1{cpu=1}"
)

// driver is the Python process that performs requests on the real cluster;
// nil when TestMain could not start it (startErr says why).
var (
	driver   *rayDriver
	startErr error
)

func TestMain(m *testing.M) {
	cleanup, err := setup()
	startErr = err
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func setup() (cleanup func(), err error) {
	cleanup = func() {}
	spec, err := sim.ParseSpec(raySpec)
	if err != nil {
		return cleanup, err
	}
	if _, err := raycluster.FindVenv(""); err != nil {
		return cleanup, err
	}
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("CROSSCHECK_VERBOSE") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := raycluster.Config{
		HeadCPUs:     1,
		Nodes:        raycluster.NodesFor(spec, 1),
		StartTimeout: 4 * time.Minute,
		Logger:       logger,
	}
	// On a loaded machine a worker's raylet can miss Ray's own 30 s
	// registration deadline (`ray start` then exits); Start removes what it
	// started, and another attempt usually succeeds.
	const attempts = 3
	var c *raycluster.Cluster
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
		c, err = raycluster.Start(ctx, cfg)
		cancel()
		if err == nil {
			break
		}
		if errors.Is(err, raycluster.ErrNoRay) || attempt == attempts {
			return cleanup, err
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(os.Stderr, "crosscheck: starting the Ray cluster (attempt %d of %d): %s\n", attempt, attempts, first)
	}
	stop := func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "crosscheck: stop Ray cluster:", err)
		}
	}
	d, err := startDriver(c)
	if err != nil {
		stop()
		return cleanup, err
	}
	driver = d
	return func() {
		d.close()
		stop()
	}, nil
}

// rayDriver is testdata/place.py connected to the cluster: one JSON line
// in per case, one JSON line out.
type rayDriver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *tailBuffer
	nodes  []rayNode
	done   chan struct{}
}

type rayNode struct {
	NodeID  string `json:"node_id"`
	IP      string `json:"ip"`
	Slice   string `json:"slice"`
	Worker  string `json:"worker"`
	PodType string `json:"pod_type"`
}

func startDriver(c *raycluster.Cluster) (*rayDriver, error) {
	script, err := filepath.Abs(filepath.Join("testdata", "place.py"))
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(c.GCSAddress)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Python(), script, c.GCSAddress, host)
	cmd.Dir = os.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "RAY_ADDRESS" || k == "PYTHONPATH" || k == "PYTHONHOME" || strings.HasPrefix(k, "TPU_") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "RAY_USAGE_STATS_ENABLED=0", "PYTHONUNBUFFERED=1")
	d := &rayDriver{cmd: cmd, lines: make(chan string, 4), stderr: &tailBuffer{max: 64 << 10}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	d.stdin, err = cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", script, err)
	}
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "{") {
				d.lines <- line
			}
		}
		close(d.lines)
	}()
	line, err := d.read(3 * time.Minute)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("Python driver did not connect: %w", err)
	}
	var hello struct {
		Ready bool      `json:"ready"`
		Nodes []rayNode `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(line), &hello); err != nil || !hello.Ready {
		d.close()
		return nil, fmt.Errorf("Python driver: unexpected first line %q (%v)", line, err)
	}
	d.nodes = hello.Nodes
	return d, nil
}

func (d *rayDriver) read(timeout time.Duration) (string, error) {
	select {
	case line, ok := <-d.lines:
		if !ok {
			_ = d.cmd.Wait()
			return "", fmt.Errorf("driver exited (%v); stderr:\n%s", d.cmd.ProcessState, d.stderr.String())
		}
		return line, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("no answer in %v; stderr:\n%s", timeout, d.stderr.String())
	}
}

// run sends one case and returns the driver's answer.
func (d *rayDriver) run(req rayCase, timeout time.Duration) (*rayAnswer, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("write to driver: %w; stderr:\n%s", err, d.stderr.String())
	}
	line, err := d.read(timeout)
	if err != nil {
		return nil, err
	}
	var ans rayAnswer
	if err := json.Unmarshal([]byte(line), &ans); err != nil {
		return nil, fmt.Errorf("driver answer %q: %w", line, err)
	}
	if ans.ID != req.ID {
		return nil, fmt.Errorf("driver answered case %q, want %q", ans.ID, req.ID)
	}
	return &ans, nil
}

// close ends the driver: stdin closed (it disconnects and exits), then
// killed by pid if it has not exited within 30 s.
func (d *rayDriver) close() {
	_ = d.stdin.Close()
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	_ = d.cmd.Wait()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.b)
	if len(s) > 4000 {
		s = "..." + s[len(s)-4000:]
	}
	return s
}
