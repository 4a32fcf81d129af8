// Package alloctest measures the heap a call allocates, for tests that
// prove a huge count is refused before anything that grows with it is
// built.
package alloctest

import (
	"runtime"
	"testing"
)

// MiB is a mebibyte, the unit the ceilings are written in.
const MiB = 1 << 20

// Bytes returns the bytes of heap f allocates in one run (the growth of
// runtime.MemStats.TotalAlloc). Allocations of other goroutines count
// too, so callers run it from a test that is not parallel.
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Below fails t when f allocates ceiling bytes or more.
func Below(t testing.TB, ceiling uint64, f func()) {
	t.Helper()
	if n := Bytes(f); n >= ceiling {
		t.Errorf("allocated %d bytes; the ceiling is %d", n, ceiling)
	}
}
