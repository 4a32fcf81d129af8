package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/nilness"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// Result is the outcome of a pipeline run: the launcher's report of the
// write, plus what the backend says about the run.
type Result struct {
	// Kind is "Pipeline"; Name the pipeline's name.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Sink is the write's op (write_parquet, write_json) and Path its
	// output directory.
	Sink string `json:"sink,omitempty"`
	Path string `json:"path,omitempty"`
	// Files lists the files under Path after the write, relative to it,
	// when Path is a local directory of the driver's host.
	Files []string `json:"files,omitempty"`
	// Error is set when the pipeline failed inside Ray.
	Error *RunError `json:"error,omitempty"`
	// Warnings are the problems the launcher worked around inside Ray
	// (code rayruntime.CodeRuntimeWarning), each also logged with its
	// traceback in the job's log.
	Warnings placement.Diagnosis `json:"warnings,omitempty"`

	// Simulated is true when the backend only placed the plan (the
	// simulator): nothing was read or written.
	Simulated bool `json:"simulated,omitempty"`
	// Backend names the backend and JobID the run's id there.
	Backend string `json:"backend,omitempty"`
	JobID   string `json:"jobId,omitempty"`
}

// RunError is a pipeline that failed inside Ray: the Python exception's
// type (RayTaskError, ActorDiedError, ...) and message.
type RunError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrPipelineFailed matches every *RunError with errors.Is.
var ErrPipelineFailed = errors.New("pipeline failed")

func (e *RunError) Error() string {
	if e == nil {
		return "data: pipeline failed"
	}
	return fmt.Sprintf("data: %s: %s", e.Type, e.Message)
}

// Is reports ErrPipelineFailed.
func (e *RunError) Is(target error) bool { return target == ErrPipelineFailed }

// Run mirrors executing a Ray Dataset to its write: it compiles p and runs
// it on r (the simulator, a Ray cluster, KubeRay) as one job.
//
// Errors:
//   - an invalid pipeline: the field.ErrorList of Compile; nothing reaches
//     the backend;
//   - a pipeline that raised inside Ray: the Result (with Error set) and its
//     *RunError, matching ErrPipelineFailed;
//   - a job that ended before the launcher reported (killed, a driver that
//     failed to start): the backend's *backend.RunError;
//   - transport and context errors as they come.
//
// On the simulator nothing runs: the Result says so (Simulated).
//
// opts tune the run (submission id, logs, status callback); nil means
// the defaults, as the zero RunOptions. A nil r, or an r that holds a nil
// pointer (a nil *sim.Cluster), is an error matching
// backend.ErrNilBackend, and a nil ctx an error too; nothing is compiled
// or run.
func (p Pipeline) Run(ctx context.Context, r backend.Runner, opts *backend.RunOptions) (*Result, error) {
	if nilness.Is(r) {
		return nil, nilBackend(r)
	}
	if ctx == nil {
		return nil, errors.New("data: Run: nil context; pass context.Background() or a request's context")
	}
	plan, err := p.Compile()
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
		// The launcher's warnings are strings; the result's are findings.
		wire := struct {
			*Result
			Warnings []string `json:"warnings"`
		}{Result: res}
		if err := json.Unmarshal(out.Output, &wire); err != nil {
			return nil, errors.Join(fmt.Errorf("data: decoding launcher result: %w", err), runErr)
		}
		res.Warnings = rayruntime.WarningFindings(wire.Warnings)
		if res.Error != nil {
			runErr = res.Error // the launcher's account is the better error
		}
	} else if out.Ran && runErr == nil && out.Succeeded() {
		return nil, fmt.Errorf("data: job %s on %s succeeded without the launcher's result", out.ID, out.Backend)
	}
	res.Simulated = !out.Ran
	res.Backend = out.Backend
	res.JobID = out.ID
	return res, runErr
}

// nilBackend is the error for a nil backend, untyped or typed.
func nilBackend(r backend.Runner) error {
	what := "nil"
	if r != nil {
		what = fmt.Sprintf("a nil %T", r)
	}
	return fmt.Errorf("data: Run: the backend is %s; pass the value its constructor returns (sim.NewCluster, raybackend.New, kuberay.New): %w", what, backend.ErrNilBackend)
}
