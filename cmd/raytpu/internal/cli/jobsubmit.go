package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// jobSubmitFlags are the flags of `raytpu job submit`.
type jobSubmitFlags struct {
	workingDir   string
	submissionID string
	wait         bool
	timeout      time.Duration
}

// newJobSubmitCmd is `raytpu job submit`: upload the working directory
// (with its bytes as progress), submit, print the job's links and, with
// --wait, follow its states until it ends.
func newJobSubmitCmd(client func() (*ray.Client, error)) *cobra.Command {
	var f jobSubmitFlags
	cmd := &cobra.Command{
		Use:   "submit [--working-dir DIR] [--wait] -- ENTRYPOINT...",
		Short: "Submit a job (uploading its working directory) and print its dashboard links; --wait follows it to the end",
		Long: `Submit a shell command as a Ray job through the dashboard's Jobs API, as
'ray job submit' does. A local --working-dir is zipped and uploaded first
(once: the cluster keeps packages by content); its bytes show as progress.
The job's dashboard page and the metrics page are printed before any wait.
--wait follows the job's states with the time spent in each and exits 1
unless the job SUCCEEDED. On a terminal the progress is one line redrawn in
place; otherwise every change is a line starting with a UTC timestamp.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("want an entrypoint after --, e.g. raytpu job submit -- python train.py")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", f.timeout); err != nil {
				return err
			}
			if f.workingDir != "" && !strings.Contains(f.workingDir, "://") {
				// A local directory: checked before anything is printed or sent.
				if err := checkDirFlag("--working-dir", f.workingDir, false); err != nil {
					return err
				}
			}
			if f.submissionID != "" {
				if err := checkArg("--submission-id", f.submissionID); err != nil {
					return err
				}
			}
			c, err := client()
			if err != nil {
				return err
			}
			return timed(cmd.Context(), f.timeout, func(ctx context.Context) error { return submitJob(ctx, cmd, c, &f, args) })
		},
	}
	cmd.Flags().StringVar(&f.workingDir, "working-dir", "", "local directory to upload as the job's runtime_env working_dir")
	cmd.Flags().StringVar(&f.submissionID, "submission-id", "", "submission id (default: a fresh raytpu_<random>); a retried submit with the same id never runs the job twice")
	cmd.Flags().BoolVar(&f.wait, "wait", false, "follow the job until it ends; exit 1 unless it SUCCEEDED")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "give up after this long, the upload, the submission and with --wait the wait included (0: no limit; each request still ends by the client's own deadline)")
	return cmd
}

// submitJob uploads the working directory, submits and with --wait
// follows the job.
func submitJob(ctx context.Context, cmd *cobra.Command, c *ray.Client, f *jobSubmitFlags, args []string) error {
	id := f.submissionID
	if id == "" {
		id = ray.NewSubmissionID() // known before the upload, for the links
	}
	p := newProgress(cmd.OutOrStdout())
	sub := ray.JobSubmission{Entrypoint: strings.Join(args, " "), SubmissionID: id}
	if f.workingDir != "" {
		p.State("UPLOADING")
		stop := ticking(p)
		uctx, _ := withUploadProgress(ctx, p, "working_dir")
		env, err := c.PrepareRuntimeEnv(uctx, &runtimeenv.RuntimeEnv{WorkingDir: f.workingDir}, ray.PackageOptions{})
		stop()
		if err != nil {
			return fmt.Errorf("--working-dir %s: %w", f.workingDir, err)
		}
		sub.RuntimeEnv = env
	}
	id, err := c.SubmitJob(ctx, sub)
	if err != nil {
		return err
	}
	jobLinks(p, c, id)
	if !f.wait {
		p.Done("submitted " + id)
		return nil
	}
	return followJob(ctx, p, c, id)
}

// newJobWaitCmd is `raytpu job wait ID`.
func newJobWaitCmd(client func() (*ray.Client, error)) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Follow a job's states until it ends, with its dashboard links; exit 1 unless it SUCCEEDED",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", timeout); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			return timed(cmd.Context(), timeout, func(ctx context.Context) error {
				if _, err := c.GetJob(ctx, args[0]); err != nil {
					return notFound(err, args[0])
				}
				p := newProgress(cmd.OutOrStdout())
				jobLinks(p, c, args[0])
				return followJob(ctx, p, c, args[0])
			})
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit; each request still ends by the client's own deadline)")
	return cmd
}

// jobLinks prints a job's dashboard page and the metrics page.
func jobLinks(p *progress.Printer, c *ray.Client, id string) {
	l := newLinks(c.BaseURL())
	p.Link("job", l.Job(id))
	p.Link("metrics", l.Metrics())
}

// followJob shows the job's states until it ends and fails unless it
// SUCCEEDED.
func followJob(ctx context.Context, p *progress.Printer, c *ray.Client, id string) error {
	stop := ticking(p)
	j, err := c.WaitJob(ctx, id, ray.WaitOptions{OnTransition: func(j ray.JobInfo) { p.State(terminalSafe(string(j.Status))) }})
	stop()
	if err != nil {
		p.Done(terminalSafe(gaveUp(err)))
		return fmt.Errorf("job %s: %w (last status %s)", id, err, dash(string(j.Status)))
	}
	if msg, _, _ := strings.Cut(strings.TrimSpace(j.Message), "\n"); msg != "" && j.Status != ray.JobSucceeded {
		p.Line(terminalSafe(msg)) // Ray appends the log's tail: `raytpu job logs` has it all
	}
	p.Done(terminalSafe(string(j.Status)))
	if j.Status != ray.JobSucceeded {
		return fmt.Errorf("job %s ended %s (logs: raytpu job logs %s)", id, j.Status, id)
	}
	return nil
}
