// Command compilebench drives the Go side of
// scripts/bench-compile-vs-python.sh: it times validating and compiling the
// JaxTrainers the script's Python side mirrors with Ray's own
// ScalingConfig and slice placement functions, and prints one JSON object
// per case: {"case", "ns_per_op", "allocs_per_op", "bytes_per_op"}, each
// the median of -runs testing.Benchmark runs.
//
//	compilebench -runs 5
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/field"
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
		var rs []testing.BenchmarkResult
		for range *runs {
			rs = append(rs, testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					c.trainer.Compile()
				}
			}))
		}
		slices.SortFunc(rs, func(a, b testing.BenchmarkResult) int {
			return int(a.NsPerOp() - b.NsPerOp())
		})
		m := rs[len(rs)/2]
		if err := enc.Encode(result{c.name, float64(m.T.Nanoseconds()) / float64(m.N), m.AllocsPerOp(), m.AllocedBytesPerOp()}); err != nil {
			fmt.Fprintln(os.Stderr, "compilebench:", err)
			os.Exit(1)
		}
	}
}

func hasSuggestion(err error) bool {
	for _, e := range field.Errors(err) {
		if e.Suggestion != "" {
			return true
		}
	}
	return false
}
