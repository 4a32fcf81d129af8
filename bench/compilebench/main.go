// Command compilebench drives the Go side of
// bench/compilebench/vs-python.sh: it times validating and compiling the
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
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/raytpu/raytpu/bench/cpubench"
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
		r := cpubench.Median(*runs, "tpu: v7x 9x9x9 rejected (GKE, 521 shapes)", func() { gke.Resolve(tpu.TargetGKE, fields) })
		if err := enc.Encode(r); err != nil {
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
		r := cpubench.Median(*runs, c.name, func() { c.trainer.Compile() })
		if err := enc.Encode(r); err != nil {
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
