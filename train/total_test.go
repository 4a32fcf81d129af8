package train_test

import (
	"errors"
	"testing"

	"github.com/raytpu/raytpu/train"
)

// train's exported functions and methods are total: nil receivers and
// nil, zero or negative inputs get an error or a plain answer, never a
// panic.
func TestTotalOverNilZeroNegative(t *testing.T) {
	t.Parallel()
	var nilResult *train.Result
	var nilRecovery *train.Recovery
	if nilResult.String() == "" || nilRecovery.String() == "" {
		t.Error("a nil result or recovery renders as nothing")
	}
	if nilResult.Recovery() != nil {
		t.Error("a nil result has a recovery")
	}
	if _, ok := nilResult.Step("step"); ok {
		t.Error("a nil result has a step")
	}
	for name, err := range map[string]error{
		"nil *RunError":      (*train.RunError)(nil),
		"nil *HostLossError": (*train.HostLossError)(nil),
		"zero HostLossError": &train.HostLossError{NeedSlices: -1, IntactSlices: -1},
		"zero RunError":      &train.RunError{},
	} {
		if err.Error() == "" {
			t.Errorf("%s: empty message", name)
		}
		_ = errors.Unwrap(err)
	}
	for _, raw := range [][]byte{nil, {}, []byte("null"), []byte("{")} {
		if r, err := train.ParseResult(raw); err == nil && r == nil {
			t.Errorf("ParseResult(%q) = nil, nil", raw)
		}
	}
	if _, err := train.ParseResult(nil); err == nil {
		t.Error("ParseResult(nil): no error")
	}
	_ = train.Host{}.Name() // "": a zero host has no name, and no panic
	for name, tr := range map[string]train.JaxTrainer{
		"zero":             {},
		"negative workers": {TrainLoopPerWorker: "m:f", ScalingConfig: train.ScalingConfig{NumWorkers: -1}, RunConfig: train.RunConfig{Name: "x"}},
		"negative slices":  {TrainLoopPerWorker: "m:f", ScalingConfig: train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: -2}, RunConfig: train.RunConfig{Name: "x"}},
	} {
		if _, err := tr.Compile(); err == nil {
			t.Errorf("%s trainer compiled", name)
		}
		if _, _, err := tr.CompileWithWarnings(); err == nil {
			t.Errorf("%s trainer compiled with warnings", name)
		}
	}
}
