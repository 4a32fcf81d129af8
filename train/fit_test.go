package train_test

import (
	"context"
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// runnerFunc is a backend.Runner that is a func, so that a nil one is a
// typed nil of another kind than a pointer.
type runnerFunc func(context.Context, *placement.Plan, backend.RunOptions) (*backend.Outcome, error)

func (f runnerFunc) Run(ctx context.Context, p *placement.Plan, o backend.RunOptions) (*backend.Outcome, error) {
	return f(ctx, p, o)
}

func fitTrainer() train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"},
		RunConfig:          train.RunConfig{Name: "nil-check"},
	}
}

// Fit refuses a nil backend, untyped or typed (a nil *sim.Cluster inside
// the interface), with an error matching backend.ErrNilBackend, never a
// panic.
func TestFitNilBackend(t *testing.T) {
	t.Parallel()
	var nilCluster *sim.Cluster
	var nilFunc runnerFunc
	for name, r := range map[string]backend.Runner{
		"untyped nil":      nil,
		"nil *sim.Cluster": nilCluster,
		"nil func backend": nilFunc,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := fitTrainer().Fit(t.Context(), r, nil)
			if !errors.Is(err, backend.ErrNilBackend) || res != nil {
				t.Fatalf("Fit = %v, %v; want nil and an error matching backend.ErrNilBackend", res, err)
			}
		})
	}
}

// Fit passes the one options value it is given, and nil means defaults.
func TestFitOptions(t *testing.T) {
	t.Parallel()
	spec, err := sim.ParseSpec("v4-16")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	var seen []backend.Status
	for _, tc := range []struct {
		name   string
		opts   *backend.RunOptions
		wantID string
	}{
		{"nil is the defaults", nil, "nil-check"},
		{"zero value", &backend.RunOptions{}, "nil-check"},
		{"submission id", &backend.RunOptions{SubmissionID: "run-7", OnStatus: func(s backend.Status) { seen = append(seen, s) }}, "run-7"},
	} {
		res, err := fitTrainer().Fit(t.Context(), c, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.JobID != tc.wantID {
			t.Errorf("%s: JobID %q, want %q", tc.name, res.JobID, tc.wantID)
		}
	}
	if len(seen) != 1 || seen[0].ID != "run-7" {
		t.Errorf("OnStatus saw %v, want one status of run-7", seen)
	}
	if _, err := fitTrainer().Fit(nil, c, nil); err == nil { //nolint:staticcheck // a nil context is what this checks
		t.Error("Fit with a nil context: no error")
	}
}
