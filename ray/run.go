package ray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/raytpu/raytpu/internal/launcher"
	"github.com/raytpu/raytpu/placement"
)

// RunOptions configures SubmitPlan and RunPlan.
type RunOptions struct {
	// SubmissionID names the job. Optional. Default: a fresh random id.
	// Pass a stable id to make a retried RunPlan (after a crash, say)
	// find the job it already submitted instead of submitting it again.
	SubmissionID string
	// Package configures how the plan's working_dir is packaged.
	Package PackageOptions
	// PollInterval is the status poll interval. Default 1s.
	PollInterval time.Duration
	// OnStatus is called on every status transition.
	OnStatus func(JobInfo)
	// Logs, if set, receives the job's driver log as it is written.
	Logs io.Writer
}

// PlanResult is a finished plan run.
type PlanResult struct {
	// Job is the job in its terminal state.
	Job JobInfo
	// Output is the launcher's outcome (the JSON after RAYTPU_RESULT),
	// decoded by the front end, e.g. train.ParseResult. Nil when the job
	// runs no launcher or ended before the launcher reported.
	Output json.RawMessage
}

// JobFailedError is a plan whose job ended FAILED or STOPPED.
type JobFailedError struct {
	Job    JobInfo
	Output json.RawMessage
}

// ErrJobFailed matches every *JobFailedError.
var ErrJobFailed = errors.New("ray: job did not succeed")

func (e *JobFailedError) Error() string {
	msg := e.Job.Message
	if msg == "" {
		msg = e.Job.ErrorType
	}
	return fmt.Sprintf("ray: job %s %s: %s", e.Job.SubmissionID, e.Job.Status, msg)
}

// Is reports ErrJobFailed.
func (e *JobFailedError) Is(target error) bool { return target == ErrJobFailed }

// SubmitPlan submits a compiled plan's job and returns its submission id.
// The plan's local working_dir is packaged with raytpu's launcher and the
// plan itself at its root, uploaded unless the cluster has it, and the job
// is submitted under opts.SubmissionID (retry-safe, see SubmitJob).
func (c *Client) SubmitPlan(ctx context.Context, p *placement.Plan, opts RunOptions) (string, error) {
	if p == nil || p.Job == nil {
		return "", fmt.Errorf("ray: SubmitPlan: %w: the plan has no job to run", ErrInvalid)
	}
	env := p.Job.RuntimeEnv.Clone()
	pkgOpts := opts.Package
	if p.Job.Launcher != "" {
		if isURI(env.WorkingDir) {
			return "", fmt.Errorf("ray: SubmitPlan: %w: plan %q runs raytpu's launcher, which ships inside a local working_dir, but working_dir is the URI %s", ErrInvalid, p.Name, env.WorkingDir)
		}
		files, err := launcher.Files(p)
		if err != nil {
			return "", err
		}
		pkgOpts.Extra = maps.Clone(pkgOpts.Extra)
		if pkgOpts.Extra == nil {
			pkgOpts.Extra = map[string][]byte{}
		}
		maps.Copy(pkgOpts.Extra, files)
		if env.WorkingDir == "" {
			dir, err := os.MkdirTemp("", "raytpu-wd-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(dir)
			env.WorkingDir = dir
		}
	}
	var err error
	if env.WorkingDir != "" || len(env.PyModules) > 0 {
		env, err = c.PrepareRuntimeEnv(ctx, env, pkgOpts)
		if err != nil {
			return "", err
		}
	}
	env.Excludes = nil // applied while packaging
	return c.SubmitJob(ctx, JobSubmission{
		Entrypoint:          p.Job.Entrypoint,
		SubmissionID:        opts.SubmissionID,
		RuntimeEnv:          env,
		Metadata:            maps.Clone(p.Job.Metadata),
		EntrypointNumCPUs:   p.Job.EntrypointNumCPUs,
		EntrypointResources: maps.Clone(p.Job.EntrypointResources),
	})
}

// RunPlan submits the plan's job, streams its log to opts.Logs, waits for
// it to end and returns the launcher's outcome. A job that ends FAILED or
// STOPPED returns a *JobFailedError (with the outcome, when the launcher
// reported one) matching ErrJobFailed.
func (c *Client) RunPlan(ctx context.Context, p *placement.Plan, opts RunOptions) (*PlanResult, error) {
	if opts.SubmissionID == "" {
		opts.SubmissionID = c.newID()
	}
	id, err := c.SubmitPlan(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return c.WaitPlan(ctx, id, opts)
}

// WaitPlan waits for a submitted plan's job and returns its outcome, as
// RunPlan does.
func (c *Client) WaitPlan(ctx context.Context, id string, opts RunOptions) (*PlanResult, error) {
	var wg sync.WaitGroup
	tailCtx, stopTail := context.WithCancel(ctx)
	defer func() {
		stopTail()
		wg.Wait()
	}()
	if opts.Logs != nil {
		wg.Go(func() {
			for chunk, err := range c.TailJobLogs(tailCtx, id) {
				if err != nil {
					c.logger.DebugContext(ctx, "ray: log tail ended", "submission_id", id, "error", err.Error())
					return
				}
				io.WriteString(opts.Logs, chunk)
			}
		})
	}
	job, err := c.WaitJob(ctx, id, WaitOptions{PollInterval: opts.PollInterval, OnTransition: opts.OnStatus})
	if err != nil {
		return nil, err
	}
	if opts.Logs != nil {
		// Give the tail a moment to drain the last lines Ray sends on close.
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
	}
	logs, err := c.JobLogs(ctx, id)
	if err != nil {
		return nil, err
	}
	out, perr := launcher.ParseResult(logs)
	if perr != nil && !errors.Is(perr, launcher.ErrNoResult) {
		return nil, perr
	}
	res := &PlanResult{Job: job, Output: out}
	if job.Status != JobSucceeded {
		return res, &JobFailedError{Job: job, Output: out}
	}
	return res, nil
}
