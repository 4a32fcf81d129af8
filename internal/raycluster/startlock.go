package raycluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/raytpu/raytpu/internal/pyenv"
)

// Node starts are paced machine-wide. Ray gives a starting node a fixed
// 30 s to register its raylet with the GCS (ray/_private/node.py,
// raylet_start_wait_time_s, not configurable in Ray 2.60), and a raylet
// registers only after its dashboard and runtime-env agents, Python
// processes that take several CPU-seconds to import, are up. On a 2-core
// machine, several nodes starting at once — from one cluster or from the
// clusters of test packages running side by side — starve each other past
// that deadline. So every cluster on the machine takes a slot of one
// machine-wide lock for each `ray start`, from spawn until the node reports
// "Ray runtime started." (or its start failed, or maxSlotHold passed), and
// nodes start one after another, each as fast as the machine lets it
// register.

// startLockEnv overrides the lock file, for tests.
const startLockEnv = "RAYTPU_START_LOCK"

// startLockPath is the machine-wide lock file, in the raytpu cache (not
// under $TMPDIR, which a test or a user may point elsewhere).
func startLockPath() string {
	if p := os.Getenv(startLockEnv); p != "" {
		return p
	}
	if root, err := pyenv.CacheRoot(); err == nil && os.MkdirAll(root, 0o755) == nil {
		return filepath.Join(root, "ray-node-start.lock")
	}
	return filepath.Join("/tmp", "raytpu-ray-node-start.lock")
}

// maxSlotHold bounds how long one node start keeps the lock: a node still
// starting after it (a very loaded machine) goes on without it, so one slow
// start delays the others at most this long.
const maxSlotHold = 90 * time.Second

// startSlot is a held slot of the machine-wide start lock.
type startSlot struct {
	once  sync.Once
	f     *os.File
	timer *time.Timer
}

// acquireStartSlot waits for the machine-wide start lock until ctx ends.
func acquireStartSlot(ctx context.Context) (*startSlot, error) {
	f, err := os.OpenFile(startLockPath(), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("raycluster: node start lock: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			s := &startSlot{f: f}
			s.timer = time.AfterFunc(maxSlotHold, s.release)
			return s, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("raycluster: node start lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("raycluster: waiting for another cluster's node to start (lock %s): %w", f.Name(), ctx.Err())
		case <-tick.C:
		}
	}
}

// release gives the slot back (closing the file drops the lock); it may be
// called more than once.
func (s *startSlot) release() {
	s.once.Do(func() {
		s.timer.Stop()
		s.f.Close()
	})
}
