package train_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/train"
)

// limitTrainer is a valid TPU trainer that reads no file.
func limitTrainer(sc train.ScalingConfig) train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      sc,
		RunConfig:          train.RunConfig{Name: "run"},
	}
}

// TestHugeScalingLimit: a worker or slice count past its limit is a
// TooMany error at its path, found before anything grows with it. Not
// parallel: it measures the heap.
func TestHugeScalingLimit(t *testing.T) {
	tpu := train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4"}
	type tc struct {
		name string
		sc   train.ScalingConfig
		want []field.Ref
	}
	var cases []tc
	for _, n := range []int{1 << 40, 99999999999, math.MaxInt} {
		s := tpu
		s.NumSlices = n
		cases = append(cases, tc{"numSlices", s, []field.Ref{{Field: "trainer.scaling_config.num_slices", Type: field.TypeTooMany}}})
		s = tpu
		s.NumWorkers = n
		cases = append(cases, tc{"numWorkers", s, []field.Ref{{Field: "trainer.scaling_config.num_workers", Type: field.TypeTooMany}}})
		s = tpu
		s.MinWorkers, s.MaxWorkers = 4, n
		cases = append(cases, tc{"maxWorkers", s, []field.Ref{{Field: "trainer.scaling_config.max_workers", Type: field.TypeTooMany}}})
		cases = append(cases, tc{"cpu numWorkers", train.ScalingConfig{NumWorkers: n}, []field.Ref{{Field: "trainer.scaling_config.num_workers", Type: field.TypeTooMany}}})
	}
	// Under MaxSlices, past MaxBundles: 1000 slices of 64 hosts.
	cases = append(cases, tc{"bundles", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "16x16", NumSlices: 1000},
		[]field.Ref{{Field: "trainer.scaling_config.num_slices", Type: field.TypeTooMany}}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := limitTrainer(c.sc)
			var err error
			alloctest.Below(t, alloctest.MiB, func() { _, err = tr.Compile() })
			if diff := cmp.Diff(c.want, field.Refs(err)); diff != "" {
				t.Errorf("Compile errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

func TestRunNameLimit(t *testing.T) {
	t.Parallel()
	tr := limitTrainer(train.ScalingConfig{NumWorkers: 1})
	tr.RunConfig.Name = strings.Repeat("r", placement.MaxNameLength+1)
	_, err := tr.Compile()
	want := []field.Ref{{Field: "trainer.run_config.name", Type: field.TypeTooMany}}
	if diff := cmp.Diff(want, field.Refs(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzJaxTrainerCompile feeds large and odd counts to a TPU trainer: no
// panic, and a refused trainer allocates little. The seeds run with go test.
func FuzzJaxTrainerCompile(f *testing.F) {
	f.Add("v6e", "4x4", 0, 1, 0, 0)
	f.Add("v6e", "4x4", 0, 1<<40, 0, 0)
	f.Add("v4", "2x2x2", 99999999999, 0, 0, 0)
	f.Add("v5p", "4x4x4", 0, 0, 16, math.MaxInt)
	f.Add("v6e", "16x16", math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt)
	f.Add("v6e", "2x4", -1, -1, -1, -1)
	f.Fuzz(func(t *testing.T, gen, topo string, workers, slices, minW, maxW int) {
		tr := limitTrainer(train.ScalingConfig{UseTPU: true, Accelerator: gen, Topology: topo,
			NumWorkers: workers, NumSlices: slices, MinWorkers: minW, MaxWorkers: maxW})
		var p *placement.Plan
		var err error
		n := alloctest.Bytes(func() { p, err = tr.Compile() })
		if err != nil {
			if len(field.Errors(err)) == 0 {
				t.Fatalf("Compile error is not a field error: %v", err)
			}
			if n >= alloctest.MiB {
				t.Fatalf("a refused trainer allocated %d bytes", n)
			}
			return
		}
		for _, g := range p.Slices {
			if g.NumSlices > placement.MaxSlices || g.NumSlices*g.BundlesPerSlice > placement.MaxBundles {
				t.Fatalf("compiled past the limits: %d slices of %d bundles", g.NumSlices, g.BundlesPerSlice)
			}
		}
	})
}
