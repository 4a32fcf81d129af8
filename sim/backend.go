package sim

import (
	"context"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// BackendName is the name the simulator gives itself in a backend.Outcome.
const BackendName = "sim"

var _ backend.Runner = (*Cluster)(nil)

// Run makes the cluster a backend.Runner: it places a plan that runs to
// completion as [Cluster.Place] does, reports where every bundle landed
// and the diagnosis, and releases the placement again, as Ray frees a
// run's resources when it ends. Nothing runs: the outcome's Ran is false
// and its state SIMULATED.
//
// A plan is checked first (backend.CheckPlan): one of another kind (a
// Serve application: see Deploy; a bare slice plan: see Place) is an error
// matching backend.ErrUnsupported, a malformed one a
// *backend.InvalidPlanError; neither is placed.
//
// A diagnosis with an error (a slice head that cannot be reserved, a group
// that spans slices) comes back as a *backend.PlacementError together with
// the outcome: on a real cluster that run would hang or never start.
// opts.OnStatus, when set, sees the one SIMULATED status. The outcome's ID
// is opts.SubmissionID, or the plan's name.
func (c *Cluster) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := c.usable("Run"); err != nil {
		return nil, err
	}
	if err := backend.CheckPlan(BackendName, p, backend.RunKinds()...); err != nil {
		return nil, err
	}
	if err := c.usableCtx(ctx, "Run"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := c.Place(ctx, p)
	if res != nil {
		defer c.Release(res)
	}
	if err != nil {
		return nil, err
	}
	id := opts.SubmissionID
	if id == "" {
		id = p.Name
	}
	out := &backend.Outcome{
		Backend:   BackendName,
		ID:        id,
		State:     backend.StateSimulated,
		Message:   "placed on the simulated cluster; nothing ran",
		Landings:  res.Landings(p),
		Diagnosis: res.Diagnosis,
	}
	if opts.OnStatus != nil {
		opts.OnStatus(backend.Status{ID: out.ID, State: out.State, Message: out.Message})
	}
	if res.Diagnosis.HasErrors() {
		return out, &backend.PlacementError{Backend: BackendName, Name: p.Name, Diagnosis: out.Diagnosis}
	}
	return out, nil
}

// Landings lists where every worker bundle of p landed, group by group and
// slice by slice, tagged with each group's workload part. r must be the
// result of placing p.
func (r *Result) Landings(p *placement.Plan) []placement.Landing {
	if r == nil || p == nil {
		return nil
	}
	var out []placement.Landing
	for gi, sp := range r.Slices {
		var part placement.Part
		if gi < len(p.Slices) {
			part = p.Slices[gi].Part
		}
		for bi, b := range sp.Bundles {
			out = append(out, placement.Landing{
				Group: gi, Part: part, Slice: b.Slice, Bundle: bi,
				State: string(b.State), Node: b.Node, SliceName: b.SliceName,
			})
		}
	}
	return out
}
