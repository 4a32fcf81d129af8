// Package backends_test holds the Go snippets of docs/backends.md: a
// backend of a platform team's own, checked by the conformance suite.
package backends_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// [snippet:quota]
// Quota is a platform team's backend: it runs plans on another backend
// (a Ray cluster, or the simulator in tests) and refuses, before anything
// runs, a plan that asks for more TPU chips than the team's quota.
type Quota struct {
	Next     backend.Runner // where plans run; required
	MaxChips int            // the most chips one plan may hold
}

// QuotaName is the name Quota gives itself in Outcome.Backend.
const QuotaName = "quota"

var _ backend.Runner = (*Quota)(nil)

func (q *Quota) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	if q == nil || q.Next == nil {
		return nil, backend.ErrNilBackend
	}
	// 1. The contract's checks first: kind, then every rule of the format.
	if err := backend.CheckPlan(QuotaName, p, backend.RunKinds()...); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// 2. The backend's own rule, as field errors below "plan".
	var errs field.ErrorList
	chips := 0
	for i, g := range p.Slices {
		chips += g.NumSlices * g.HostsPerSlice * g.ChipsPerHost
		if chips > q.MaxChips {
			errs = append(errs, field.Invalid(field.NewPath("plan", "slices").Index(i).Child("numSlices"),
				g.NumSlices, fmt.Sprintf("the plan holds %d chips from here on; the quota is %d", chips, q.MaxChips)))
			break
		}
	}
	if len(errs) > 0 {
		return nil, &backend.InvalidPlanError{Backend: QuotaName, Name: p.Name, Errs: errs}
	}
	// 3. Run, and report the outcome under this backend's name; the
	// wrapped backend's errors (RunError, PlacementError) mean the same.
	out, err := q.Next.Run(ctx, p, opts)
	if out != nil {
		o := *out
		o.Backend = QuotaName
		out = &o
	}
	return out, err
}

// [end:quota]

func newSim(spec string) (*sim.Cluster, error) {
	s, err := sim.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return sim.NewCluster(s)
}

// [snippet:conformance]
func TestQuotaConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backendtest.Backend {
		cluster, err := newSim("v4-8,cpu:1") // a fresh backend per rule
		if err != nil {
			t.Fatal(err)
		}
		return backendtest.Backend{
			Name:   QuotaName,
			Runner: &Quota{Next: cluster, MaxChips: 64},
		}
	})
}

// [end:conformance]

// A front end takes the backend as it takes the module's own.
func Example_quota() {
	cluster, err := newSim("2*v6e-16,cpu:1")
	if err != nil {
		log.Fatal(err)
	}
	// [snippet:use]
	q := &Quota{Next: cluster, MaxChips: 16}
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: "llama"},
	}
	_, err = trainer.Fit(context.Background(), q, nil)
	fmt.Println(errors.Is(err, backend.ErrInvalidPlan), field.Refs(err))

	trainer.ScalingConfig.NumSlices = 1
	res, err := trainer.Fit(context.Background(), q, nil)
	fmt.Println(err, res.Backend, len(res.Workers), "workers")
	// [end:use]

	// Output:
	// true [{plan.slices[0].numSlices Invalid}]
	// <nil> quota 4 workers
}

// The neutral sentinels: a nil backend, a plan of a kind the call does
// not run, a malformed plan.
func Example_sentinels() {
	ctx := context.Background()
	// [snippet:sentinels]
	var q *Quota
	_, err := q.Run(ctx, backendtest.JobPlan("nightly", placement.KindJaxTrainer), backend.RunOptions{})
	fmt.Println(errors.Is(err, backend.ErrNilBackend))

	cluster, _ := newSim("v4-8,cpu:1")
	q = &Quota{Next: cluster, MaxChips: 64}
	_, err = q.Run(ctx, backendtest.SlicePlan("reserve"), backend.RunOptions{})
	fmt.Println(errors.Is(err, backend.ErrUnsupported))

	broken := backendtest.JobPlan("nightly", placement.KindJaxTrainer)
	broken.Job.Entrypoint = ""
	_, err = q.Run(ctx, broken, backend.RunOptions{})
	fmt.Println(errors.Is(err, backend.ErrInvalidPlan), field.Refs(err))
	// [end:sentinels]

	// Output:
	// true
	// true
	// true [{plan.job.entrypoint Required}]
}
