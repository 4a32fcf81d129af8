package train

import (
	"context"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/nilness"
)

// Fit mirrors trainer.fit(): it compiles t and runs it on r (the
// simulator, a Ray cluster, KubeRay) and returns the run's Result.
//
// Errors:
//   - an invalid trainer: the field.ErrorList of Compile; nothing reaches
//     the backend;
//   - a run that failed: the Result (with Error set) and its *RunError,
//     matching ErrTrainingFailed, as fit() raises TrainingFailedError;
//   - a TPU run that failed after losing hosts: a *HostLossError (matching
//     ErrHostLost, and ErrTrainingFailed through the *RunError it wraps)
//     that names the lost hosts, the intact slices the group needs and
//     those left, and what to do;
//   - a job that ended before the launcher reported (killed, a driver
//     that failed to start): the backend's *backend.RunError;
//   - on the simulator, a placement that would hang or never start: the
//     Result (Simulated, with workers and diagnosis) and a
//     *backend.PlacementError.
//
// On a cluster the Result also says how the run got past failures:
// Attempts (each start of the worker group, its slices and the checkpoint
// it resumed from), LostHosts, the controller's Timeline, and Recovery()
// to sum them up.
//
// On the simulator nothing trains: the Result says so (Simulated) and
// holds where every worker landed and the diagnosis. The compile warnings
// (of the Datasets' batch prediction) are on Result.Warnings.
//
// opts tune the run (submission id, logs, status callback); nil means
// the defaults, as the zero RunOptions. A nil r, or an r that holds a nil
// pointer (a nil *sim.Cluster), is an error matching
// backend.ErrNilBackend, and so is a nil ctx; nothing is compiled or run.
func (t JaxTrainer) Fit(ctx context.Context, r backend.Runner, opts *backend.RunOptions) (*Result, error) {
	if nilness.Is(r) {
		return nil, nilBackend(r)
	}
	if ctx == nil {
		return nil, errors.New("train: Fit: nil context; pass context.Background() or a request's context")
	}
	plan, warnings, err := t.CompileWithWarnings()
	if err != nil {
		return nil, err
	}
	var o backend.RunOptions
	if opts != nil {
		o = *opts
	}
	out, runErr := r.Run(ctx, plan, o)
	if out == nil {
		return nil, runErr
	}
	res := &Result{}
	if len(out.Output) > 0 {
		parsed, perr := ParseResult(out.Output)
		if parsed == nil {
			return nil, errors.Join(perr, runErr)
		}
		res = parsed
		if perr != nil {
			runErr = perr // the launcher's account of the failure is the better error
		}
	} else if out.Ran && runErr == nil && out.Succeeded() {
		return nil, fmt.Errorf("train: job %s on %s succeeded without the launcher's result", out.ID, out.Backend)
	}
	if len(plan.Slices) > 0 {
		g := plan.Slices[0]
		need := g.NumSlices
		if m := t.ScalingConfig.MinWorkers; m > 0 && g.BundlesPerSlice > 0 {
			need = m / g.BundlesPerSlice
		}
		runErr = hostLossError(res, runErr, g.PodType, need)
	}
	res.Warnings = append(warnings, res.Warnings...)
	res.Simulated = !out.Ran
	res.Backend = out.Backend
	res.JobID = out.ID
	res.Workers = out.Landings
	res.Diagnosis = out.Diagnosis
	return res, runErr
}

// nilBackend is the error for a nil backend, untyped or typed.
func nilBackend(r backend.Runner) error {
	what := "nil"
	if r != nil {
		what = fmt.Sprintf("a nil %T", r)
	}
	return fmt.Errorf("train: Fit: the backend is %s; pass the value its constructor returns (sim.NewCluster, raybackend.New, kuberay.New): %w", what, backend.ErrNilBackend)
}
