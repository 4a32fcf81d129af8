package train_test

import (
	"testing"

	"github.com/raytpu/raytpu/train"
)

// benchTrainer is the two-slice v6e 4x4 trainer that
// bench/compilebench/vs-python.sh compares with Ray's Python
// ScalingConfig plus slice bundles.
func benchTrainer() train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "TPU-V6E", Topology: "4x4", NumWorkers: 8},
		RunConfig:          train.RunConfig{Name: "bench"},
	}
}

func BenchmarkCompile(b *testing.B) {
	valid := benchTrainer()
	badV7x := benchTrainer()
	badV7x.ScalingConfig.Accelerator = "v7x"
	badV7x.ScalingConfig.Topology = "4x4x12"
	badV7x.ScalingConfig.NumWorkers = 0
	badRun := benchTrainer()
	badRun.RunConfig = train.RunConfig{Checkpoint: train.CheckpointConfig{NumToKeep: -1, ScoreOrder: "mx"}, Failure: train.FailureConfig{MaxFailures: -2}}
	cases := []struct {
		name    string
		trainer train.JaxTrainer
		wantErr bool
	}{
		{"v6e-4x4-two-slices", valid, false},
		{"v7x-4x4x12-invalid", badV7x, true},
		{"run-config-invalid", badRun, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.trainer.Compile(); (err != nil) != c.wantErr {
					b.Fatalf("Compile error = %v, want error %v", err, c.wantErr)
				}
			}
		})
	}
}
