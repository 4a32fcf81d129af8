// Command compilebench drives the Go side of
// scripts/bench-compile-vs-python.sh: it times validating and compiling the
// JaxTrainers the script's Python side mirrors with Ray's own
// ScalingConfig and slice placement functions, and prints one JSON object
// per case: {"case", "ns_per_op", "cpu_ns_per_op", "allocs_per_op",
// "bytes_per_op"}, each the median of -runs runs. ns_per_op is wall time;
// cpu_ns_per_op is the process's CPU time (user + system, GC included),
// which a machine shared with other work disturbs far less.
//
//	compilebench -runs 5
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
	"github.com/raytpu/raytpu/train"
)

// trainer is the two-slice v6e 4x4 JaxTrainer: Ray's
// ScalingConfig(use_tpu=True, topology="4x4", accelerator_type="TPU-V6E",
// num_workers=8) and the slice bundles of its SlicePlacementGroup.
func trainer() train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "TPU-V6E", Topology: "4x4", NumWorkers: 8},
		RunConfig:          train.RunConfig{Name: "bench"},
	}
}

type result struct {
	Case        string  `json:"case"`
	NsPerOp     float64 `json:"ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
}

func main() {
	runs := flag.Int("runs", 5, "benchmark runs per case; the median is printed")
	flag.Parse()

	invalid := trainer()
	invalid.ScalingConfig.Accelerator = "TPU-V7X"
	invalid.ScalingConfig.Topology = "4x4x12"
	cases := []struct {
		name    string
		trainer train.JaxTrainer
		valid   bool
	}{
		{"valid: v6e 4x4, 8 workers (2 slices)", trainer(), true},
		{"invalid: v7x 4x4x12 (did you mean)", invalid, false},
	}
	enc := json.NewEncoder(os.Stdout)
	defer func() {
		// Go only: the largest "did you mean" search in the catalog, a v7x
		// shape GKE rejects, against every v7x shape GKE provisions.
		gke := tpu.SliceSpec{Generation: "v7x", Topology: "9x9x9"}
		fields := tpu.FieldsUnder(field.NewPath("trainer", "scaling"))
		if _, errs := gke.Resolve(tpu.TargetGKE, fields); len(errs) == 0 {
			fmt.Fprintln(os.Stderr, "compilebench: v7x 9x9x9 accepted under GKE")
			os.Exit(1)
		}
		var rs []result
		for range *runs {
			rs = append(rs, measure("tpu: v7x 9x9x9 rejected (GKE, 521 shapes)", func() { gke.Resolve(tpu.TargetGKE, fields) }))
		}
		slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.CPUNsPerOp, b.CPUNsPerOp) })
		if err := enc.Encode(rs[len(rs)/2]); err != nil {
			fmt.Fprintln(os.Stderr, "compilebench:", err)
			os.Exit(1)
		}
	}()
	for _, c := range cases {
		// Check the case once, outside the timing.
		_, err := c.trainer.Compile()
		if (err == nil) != c.valid {
			fmt.Fprintf(os.Stderr, "compilebench: %s: Compile error = %v\n", c.name, err)
			os.Exit(1)
		}
		if !c.valid && !hasSuggestion(err) {
			fmt.Fprintf(os.Stderr, "compilebench: %s: no suggestion in %v\n", c.name, err)
			os.Exit(1)
		}
		var rs []result
		for range *runs {
			rs = append(rs, measure(c.name, func() { c.trainer.Compile() }))
		}
		slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.CPUNsPerOp, b.CPUNsPerOp) })
		if err := enc.Encode(rs[len(rs)/2]); err != nil {
			fmt.Fprintln(os.Stderr, "compilebench:", err)
			os.Exit(1)
		}
	}
}

// measure runs f in a loop for at least a quarter second of CPU time.
func measure(name string, f func()) result {
	for range 1000 {
		f() // warm up
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wall, cpu := time.Now(), cpuTime()
	n := 0
	for cpuTime()-cpu < 250*time.Millisecond {
		for range 1000 {
			f()
		}
		n += 1000
	}
	cpuD, wallD := cpuTime()-cpu, time.Since(wall)
	runtime.ReadMemStats(&after)
	return result{
		Case:        name,
		NsPerOp:     float64(wallD.Nanoseconds()) / float64(n),
		CPUNsPerOp:  float64(cpuD.Nanoseconds()) / float64(n),
		AllocsPerOp: int64(after.Mallocs-before.Mallocs) / int64(n),
		BytesPerOp:  int64(after.TotalAlloc-before.TotalAlloc) / int64(n),
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func hasSuggestion(err error) bool {
	for _, e := range field.Errors(err) {
		if e.Suggestion != "" {
			return true
		}
	}
	return false
}
