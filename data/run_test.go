package data_test

import (
	"context"
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

type runnerFunc func(context.Context, *placement.Plan, backend.RunOptions) (*backend.Outcome, error)

func (f runnerFunc) Run(ctx context.Context, p *placement.Plan, o backend.RunOptions) (*backend.Outcome, error) {
	return f(ctx, p, o)
}

func nilCheckPipeline() data.Pipeline {
	return data.Pipeline{
		Name:    "nil-check",
		Dataset: data.From(data.Range{N: 10}).Write(data.WriteParquet{Path: "/tmp/out"}),
	}
}

// Run refuses a nil backend, untyped or typed, with an error matching
// backend.ErrNilBackend, never a panic.
func TestRunNilBackend(t *testing.T) {
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
			res, err := nilCheckPipeline().Run(t.Context(), r, nil)
			if !errors.Is(err, backend.ErrNilBackend) || res != nil {
				t.Fatalf("Run = %v, %v; want nil and an error matching backend.ErrNilBackend", res, err)
			}
		})
	}
}

// Run passes the one options value it is given, and nil means defaults.
func TestRunOptions(t *testing.T) {
	t.Parallel()
	spec, err := sim.ParseSpec("cpu:1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts   *backend.RunOptions
		wantID string
	}{
		{nil, "nil-check"},
		{&backend.RunOptions{}, "nil-check"},
		{&backend.RunOptions{SubmissionID: "run-7"}, "run-7"},
	} {
		res, err := nilCheckPipeline().Run(t.Context(), c, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.JobID != tc.wantID || !res.Simulated {
			t.Errorf("opts %+v: JobID %q simulated %v, want %q simulated", tc.opts, res.JobID, res.Simulated, tc.wantID)
		}
	}
	if _, err := nilCheckPipeline().Run(nil, c, nil); err == nil { //nolint:staticcheck // a nil context is what this checks
		t.Error("Run with a nil context: no error")
	}
}
