// Package cpubench times a function by the CPU time the process spends on
// it (user + system, garbage collection included), which other work on a
// shared machine disturbs far less than wall time. The Go sides of the
// compile benchmark scripts use it; their Python sides measure the same
// way with time.process_time.
package cpubench

import (
	"cmp"
	"runtime"
	"slices"
	"syscall"
	"time"
)

// Result is one case's timing, as the scripts read it (one JSON object a
// line).
type Result struct {
	Case        string  `json:"case"`
	NsPerOp     float64 `json:"ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
}

// Median measures f runs times and returns the run of median CPU time.
func Median(runs int, name string, f func()) Result {
	rs := make([]Result, 0, max(runs, 1))
	for range max(runs, 1) {
		rs = append(rs, Measure(name, f))
	}
	slices.SortFunc(rs, func(a, b Result) int { return cmp.Compare(a.CPUNsPerOp, b.CPUNsPerOp) })
	return rs[len(rs)/2]
}

// Measure runs f in a loop for at least a quarter second of CPU time,
// after a warm-up, and reports the time, allocations and bytes per call.
func Measure(name string, f func()) Result {
	for range 1000 {
		f() // warm up
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wall, cpu := time.Now(), CPUTime()
	n := 0
	for CPUTime()-cpu < 250*time.Millisecond {
		for range 1000 {
			f()
		}
		n += 1000
	}
	cpuD, wallD := CPUTime()-cpu, time.Since(wall)
	runtime.ReadMemStats(&after)
	return Result{
		Case:        name,
		NsPerOp:     float64(wallD.Nanoseconds()) / float64(n),
		CPUNsPerOp:  float64(cpuD.Nanoseconds()) / float64(n),
		AllocsPerOp: int64(after.Mallocs-before.Mallocs) / int64(n),
		BytesPerOp:  int64(after.TotalAlloc-before.TotalAlloc) / int64(n),
	}
}

// CPUTime is the CPU time the process has used, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // RUSAGE_SELF with a valid pointer cannot fail
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
