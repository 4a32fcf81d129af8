// Package raytest starts a local Ray cluster (package raycluster) for one
// test or benchmark.
//
// It is split from raycluster so that programs using raycluster, such as
// the raytpu command's dev-cluster, do not link package testing.
package raytest

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
)

// Start starts a cluster for one test (or benchmark) and stops it in
// tb.Cleanup. The cluster's log goes to tb.Log. When Ray is missing it
// fails the test with a message saying how to install it; it never skips.
// For one cluster per package, call raycluster.Start from TestMain instead:
//
//	func TestMain(m *testing.M) {
//		c, err := raycluster.Start(context.Background(), raycluster.Config{})
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		code := m.Run()
//		c.Stop()
//		os.Exit(code)
//	}
func Start(tb testing.TB, cfg raycluster.Config) *raycluster.Cluster {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := raycluster.Start(ctx, cfg)
	if err != nil {
		if errors.Is(err, raycluster.ErrNoRay) {
			tb.Fatalf("this test needs a local Ray: %v", err)
		}
		tb.Fatalf("start local Ray cluster: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop local Ray cluster: %v", err)
		}
	})
	return c
}

type logWriter struct{ tb testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Main is a TestMain for a package whose tests share one cluster posing as
// the hosts of a simulated cluster spec (one CPU per host, see
// raycluster.NodesFor): it starts the cluster, hands it to started, runs
// the tests and stops the cluster. It returns the exit code for os.Exit.
//
//	func TestMain(m *testing.M) {
//		os.Exit(raytest.Main(m, "2*v4-16,v4-8", func(c *raycluster.Cluster) { dashboard = c.DashboardURL }))
//	}
func Main(m *testing.M, spec string, started func(*raycluster.Cluster)) int {
	return MainWith(m, spec, nil, started)
}
