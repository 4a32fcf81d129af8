package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// syncBuffer is a bytes.Buffer safe for the printer's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStartProgressCountsNodesOnRealRay feeds dev-cluster's start progress the
// records raycluster.Start logs, pointing at a real cluster's dashboard:
// the links, the states, and the nodes the real dashboard reports alive
// out of wanted, as timestamped lines.
func TestStartProgressCountsNodesOnRealRay(t *testing.T) {
	c := realTPUCluster(t)
	var out syncBuffer
	log, stop := cli.StartProgress(t.Context(), &out, 4)
	log.Info("starting ray head", "gcs", "127.0.0.1:1", "dashboard", c.DashboardURL)
	log.Info("starting ray worker", "node", "slice-a/0")
	log.Warn("restarting ray worker whose ray start exited", "node", "slice-a/1")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for !strings.Contains(out.String(), "nodes up 4/4") && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	log.Info("waiting for the Jobs API to take submissions", "dashboard", c.DashboardURL)
	log.Info("ray cluster ready", "nodes", 4)
	stop()
	lines := plainLines(t, out.String())
	matchInOrder(t, lines, mustCompile(
		`^STARTING HEAD$`,
		`^cluster: `+regexp.QuoteMeta(c.DashboardURL+"/#/cluster")+`$`,
		`^metrics: `+regexp.QuoteMeta(c.DashboardURL+"/#/metrics")+`$`,
		`^STARTING WORKERS \(after `,
		`^WARN restarting ray worker whose ray start exited node=slice-a/1$`,
		`^nodes up 4/4$`,
		`^STARTING JOBS API \(after `,
		`^READY \(after `,
	))
}

func mustCompile(patterns ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = regexp.MustCompile(p)
	}
	return out
}
