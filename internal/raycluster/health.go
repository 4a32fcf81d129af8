package raycluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/raytpu/raytpu/rayvocab"
)

// waitDashboard waits until the head's dashboard answers GET /api/version
// with Ray's version document. A bare 200 is not enough: every Prometheus
// exporter of Ray answers 200, with metrics text, to a GET of any path
// (see jobsprobe.go).
func (c *Cluster) waitDashboard(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		if p := c.exited(); p != nil {
			return fmt.Errorf("ray start for %s exited: %v", p.Name, p.waitErr)
		}
		if _, failed := startState(c.head()); failed != nil {
			return failed
		}
		if err := c.versionOK(ctx, hc); err == nil {
			return nil
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dashboard %s not answering: %w; last: %v", c.DashboardURL, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

func (c *Cluster) waitNodes(ctx context.Context, cfg Config) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if p := c.exited(); p != nil {
			np, err := c.restart(ctx, p)
			if err != nil {
				return err
			}
			if np == nil {
				return fmt.Errorf("ray start for %s exited: %v", p.Name, p.waitErr)
			}
			continue
		}
		nodes, err := c.Nodes(ctx)
		if err != nil {
			last = err.Error()
		} else if msg := c.checkNodes(cfg, nodes); msg != "" {
			last = msg
		} else {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %s", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// checkNodes returns "" when every node is ALIVE with what cfg asked for.
func (c *Cluster) checkNodes(cfg Config, nodes []NodeInfo) string {
	byIP := map[string]NodeInfo{}
	for _, n := range nodes {
		if n.Alive() {
			byIP[n.IP] = n
		}
	}
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	for i, p := range procs {
		n, ok := byIP[p.IP]
		if !ok {
			return fmt.Sprintf("node %s (%s) not ALIVE yet", p.Name, p.IP)
		}
		var wantCPU int
		var res map[string]float64
		var labels map[string]string
		var env map[string]string
		if i == 0 {
			wantCPU, res, labels = cfg.HeadCPUs, cfg.HeadResources, cfg.HeadLabels
		} else {
			nd := cfg.Nodes[i-1]
			wantCPU, res, labels, env = max(nd.NumCPUs, 1), nd.Resources, nd.Labels, nd.Env
		}
		if got := n.Resources[rayvocab.ResourceCPU]; got != float64(wantCPU) {
			return fmt.Sprintf("node %s: CPU %v, want %d", p.Name, got, wantCPU)
		}
		for k, v := range res {
			if got := n.Resources[k]; got != v {
				return fmt.Sprintf("node %s: resource %s = %v, want %v", p.Name, k, got, v)
			}
		}
		for k, v := range labels {
			if got := n.Labels[k]; got != v {
				return fmt.Sprintf("node %s: label %s = %q, want %q", p.Name, k, got, v)
			}
		}
		if name := env[rayvocab.EnvTPUName]; name != "" {
			if got := n.Labels[rayvocab.LabelTPUSliceName]; got != name {
				return fmt.Sprintf("node %s: label ray.io/tpu-slice-name = %q, want %q", p.Name, got, name)
			}
		}
	}
	return ""
}

func (c *Cluster) startError(what string, err error) error {
	return fmt.Errorf("raycluster: %s: %w\n%s", what, err, c.LogTail(20))
}

// LogTail returns the last lines of each node's `ray start` output and of
// every non-empty Ray *.err log, for error messages.
func (c *Cluster) LogTail(lines int) string {
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	var b strings.Builder
	for _, p := range procs {
		files := []string{filepath.Join(p.Dir, "ray-start.log")}
		errs, _ := filepath.Glob(filepath.Join(p.Dir, "session_*", "logs", "*.err"))
		sort.Strings(errs)
		for _, f := range errs {
			if !strings.Contains(f, "session_latest") {
				files = append(files, f)
			}
		}
		for _, f := range files {
			t := tailFile(f, lines)
			if strings.TrimSpace(t) == "" {
				continue
			}
			fmt.Fprintf(&b, "--- %s: %s\n%s", p.Name, f, t)
			if !strings.HasSuffix(t, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// DashboardLogTail returns the last lines of the head's dashboard logs
// (the dashboard, each of its head modules and the head's dashboard
// agent), for a failure that Ray's job and node views do not explain.
func (c *Cluster) DashboardLogTail(lines int) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.head().Dir, "session_*", "logs", "dashboard*.log"))
	sort.Strings(files)
	for _, f := range files {
		if strings.Contains(f, "session_latest") {
			continue
		}
		if t := tailFile(f, lines); strings.TrimSpace(t) != "" {
			fmt.Fprintf(&b, "--- head: %s\n%s\n", f, t)
		}
	}
	return b.String()
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	var ring []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		ring = append(ring, sc.Text())
		if len(ring) > n {
			ring = ring[1:]
		}
	}
	return strings.Join(ring, "\n")
}

// head returns the head's process.
func (c *Cluster) head() *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[0]
}
