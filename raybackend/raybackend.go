package raybackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
)

// Name is the name the backend gives itself in a backend.Outcome.
const Name = "ray"

// Backend runs plans on one Ray cluster. It is safe for concurrent use.
type Backend struct {
	client *ray.Client
	pkg    ray.PackageOptions
	poll   time.Duration
	drain  time.Duration
	logger *slog.Logger
}

var _ backend.Runner = (*Backend)(nil)

// New returns a backend that runs plans through client, or the error of
// the first invalid option.
func New(client *ray.Client, opts ...Option) (*Backend, error) {
	if client == nil {
		return nil, errors.New("raybackend: New(nil): a dashboard client is required (ray.NewClient)")
	}
	b := &Backend{client: client, poll: defaultPoll, drain: 5 * time.Second, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Run submits the plan's job, streams its log to opts.Logs, waits for it
// to end and returns the outcome, with the launcher's output when it
// reported one. A job that ends FAILED or STOPPED returns the outcome and
// a *backend.RunError. With a SubmissionID that names a job already
// submitted (a retried Run), Run follows that job instead of submitting
// again; one that runs another plan is an error matching
// backend.ErrAlreadyExists (and ray.ErrAlreadyExists).
//
// The plan is checked first (backend.CheckPlan): a plan that does not run
// to completion is backend.ErrUnsupported, and a malformed plan, or one
// that runs raytpu's launcher from a remote working_dir (the launcher
// ships inside a local one), a *backend.InvalidPlanError (errors.Is
// backend.ErrInvalidPlan and, as before, ray.ErrInvalid) with its field
// errors; nothing is packaged or sent.
func (b *Backend) Run(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := b.usable("Run"); err != nil {
		return nil, err
	}
	if opts.SubmissionID == "" {
		opts.SubmissionID = ray.NewSubmissionID()
	}
	id, err := b.Submit(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return b.WaitRun(ctx, id, opts)
}

// MetadataPlanDigest is the job metadata key holding the digest of the
// plan a job runs, by which a retried Submit recognises its own job.
const MetadataPlanDigest = "raytpu.plan-digest"

// Submit submits the plan's job under opts.SubmissionID (retry-safe, see
// ray.Client.SubmitJob) and returns its submission id.
//
// When a job with that id already exists and runs the same plan (its
// metadata carries the plan's digest), Submit returns its id without
// packaging or submitting anything: a retried Run follows the job it
// started. A job of that id that runs another plan is an error matching
// backend.ErrAlreadyExists and ray.ErrAlreadyExists.
func (b *Backend) Submit(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (string, error) {
	if err := b.usable("Submit"); err != nil {
		return "", err
	}
	id, err := b.submit(ctx, p, opts)
	return id, neutral(err)
}

func (b *Backend) submit(ctx context.Context, p *placement.Plan, opts backend.RunOptions) (string, error) {
	if err := backend.CheckPlan(Name, p, backend.RunKinds()...); err != nil {
		return "", err
	}
	if wd := p.Job.RuntimeEnv.WorkingDir; p.Job.Launcher != "" && ray.IsURI(wd) {
		return "", refuse(p, field.Invalid(field.NewPath("plan", "job", "runtimeEnv", "workingDir"), wd,
			"the plan runs raytpu's launcher, which ships inside a local working_dir: give a local directory"))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest, err := planDigest(p)
	if err != nil {
		return "", err
	}
	if opts.SubmissionID != "" {
		if found, err := b.existing(ctx, opts.SubmissionID, digest); found || err != nil {
			return opts.SubmissionID, err
		}
	}
	env := p.Job.RuntimeEnv.Clone()
	entrypoint := p.Job.Entrypoint
	pkg := b.pkg
	if p.Job.Launcher != "" {
		files, err := rayruntime.Files(p)
		if err != nil {
			return "", err
		}
		pkg.Extra = maps.Clone(pkg.Extra)
		if pkg.Extra == nil {
			pkg.Extra = map[string][]byte{}
		}
		maps.Copy(pkg.Extra, files)
		if env.WorkingDir == "" {
			dir, err := os.MkdirTemp("", "raytpu-wd-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(dir)
			env.WorkingDir = dir
		}
		entrypoint = rayruntime.Entrypoint
	}
	if env.WorkingDir != "" || len(env.PyModules) > 0 {
		if env, err = b.client.PrepareRuntimeEnv(ctx, env, pkg); err != nil {
			return "", err
		}
	}
	env.Excludes = nil // applied while packaging
	metadata := maps.Clone(p.Job.Metadata)
	if metadata == nil {
		metadata = map[string]string{}
	}
	metadata[MetadataPlanDigest] = digest
	id, err := b.client.SubmitJob(ctx, ray.JobSubmission{
		Entrypoint:          entrypoint,
		SubmissionID:        opts.SubmissionID,
		RuntimeEnv:          env,
		Metadata:            metadata,
		EntrypointNumCPUs:   p.Job.EntrypointNumCPUs,
		EntrypointResources: maps.Clone(p.Job.EntrypointResources),
	})
	if errors.Is(err, ray.ErrAlreadyExists) && opts.SubmissionID != "" {
		// Another Submit of this id won the race: follow it if it is ours.
		if found, ferr := b.existing(ctx, opts.SubmissionID, digest); found || ferr != nil {
			return opts.SubmissionID, ferr
		}
	}
	return id, err
}

// existing reports whether job id exists and runs the plan of the given
// digest; a job of that id running anything else is an error.
func (b *Backend) existing(ctx context.Context, id, digest string) (bool, error) {
	job, err := b.client.GetJob(ctx, id)
	switch {
	case errors.Is(err, ray.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case job.Metadata[MetadataPlanDigest] != digest:
		return false, fmt.Errorf("raybackend: submission id %s: %w: it names a job that runs another plan (digest %q, want %q); choose another id",
			id, ray.ErrAlreadyExists, job.Metadata[MetadataPlanDigest], digest)
	}
	b.logger.DebugContext(ctx, "raybackend: following the job already submitted", "submission_id", id)
	return true, nil
}

// planDigest is the first 16 hex digits of the SHA-256 of the plan's JSON.
func planDigest(p *placement.Plan) (string, error) {
	raw, err := p.MarshalIndent()
	if err != nil {
		return "", fmt.Errorf("raybackend: encoding plan %q: %w", p.Name, err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

// WaitRun follows a submitted job to its end and returns its outcome, as
// Run does.
// An unknown id is an error matching backend.ErrNotFound.
func (b *Backend) WaitRun(ctx context.Context, id string, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := b.usable("WaitRun"); err != nil {
		return nil, err
	}
	out, err := b.waitRun(ctx, id, opts)
	return out, neutral(err)
}

func (b *Backend) waitRun(ctx context.Context, id string, opts backend.RunOptions) (*backend.Outcome, error) {
	var wg sync.WaitGroup
	tailCtx, stopTail := context.WithCancel(ctx)
	defer func() {
		stopTail()
		wg.Wait()
	}()
	if opts.Logs != nil {
		wg.Go(func() {
			for chunk, err := range b.client.TailJobLogs(tailCtx, id) {
				if err != nil {
					b.logger.DebugContext(ctx, "raybackend: log tail ended", "submission_id", id, "error", err.Error())
					return
				}
				io.WriteString(opts.Logs, chunk)
			}
		})
	}
	var onTransition func(ray.JobInfo)
	if opts.OnStatus != nil {
		onTransition = func(j ray.JobInfo) {
			opts.OnStatus(backend.Status{ID: j.SubmissionID, State: backend.State(j.Status), Message: j.Message, Time: time.Now()})
		}
	}
	job, err := b.client.WaitJob(ctx, id, ray.WaitOptions{PollInterval: b.poll, OnTransition: onTransition})
	if err != nil {
		return nil, err
	}
	if opts.Logs != nil {
		// Give the tail a moment to drain the last lines Ray sends on close.
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(b.drain):
		case <-ctx.Done():
		}
	}
	logs, err := b.client.JobLogs(ctx, id)
	if err != nil {
		return nil, err
	}
	output, perr := rayruntime.ParseResult(logs)
	if perr != nil && !errors.Is(perr, rayruntime.ErrNoResult) {
		return nil, perr
	}
	msg := job.Message
	if msg == "" {
		msg = job.ErrorType
	}
	out := &backend.Outcome{Backend: Name, Ran: true, ID: job.SubmissionID, State: backend.State(job.Status), Message: msg, Output: output}
	if job.Status != ray.JobSucceeded {
		return out, &backend.RunError{Outcome: out}
	}
	return out, nil
}
