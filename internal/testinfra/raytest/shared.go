package raytest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
)

// Shared is one cluster that several tests of a package use in turn. The
// first test that calls Get starts it; TestMain stops it after m.Run:
//
//	var slices = &raytest.Shared{Config: raycluster.Config{...}}
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		slices.Stop()
//		os.Exit(code)
//	}
//
// Tests that share a cluster must leave it as they found it and check that
// they found it clean (no placement groups, no Serve applications, ...):
// sharing saves a cluster start only where that is checked, not assumed.
// A test that needs a fresh or broken cluster starts its own with [Start].
type Shared struct {
	Config raycluster.Config

	once    sync.Once
	cluster *raycluster.Cluster
	err     error
}

// Get returns the shared cluster, starting it on first use. It fails tb
// when the cluster could not start, every time it is called.
func (s *Shared) Get(tb testing.TB) *raycluster.Cluster {
	tb.Helper()
	s.once.Do(func() {
		// The cluster outlives the test that started it: its log must not
		// go to that test's tb.Log, so it is the config's own (default:
		// discarded; raycluster's errors carry the node logs' tails).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		s.cluster, s.err = raycluster.Start(ctx, s.Config)
	})
	if s.err != nil {
		if errors.Is(s.err, raycluster.ErrNoRay) {
			tb.Fatalf("this test needs a local Ray: %v", s.err)
		}
		tb.Fatalf("start the shared local Ray cluster: %v", s.err)
	}
	return s.cluster
}

// Stop stops the cluster if a test started it.
func (s *Shared) Stop() error {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Stop()
}
