package ray

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/raytpu/raytpu/runtimeenv"
)

// JobStatus is a Ray job's status.
type JobStatus string

// Job statuses. STOPPED, SUCCEEDED and FAILED are terminal.
const (
	JobPending   JobStatus = "PENDING"
	JobRunning   JobStatus = "RUNNING"
	JobStopped   JobStatus = "STOPPED"
	JobSucceeded JobStatus = "SUCCEEDED"
	JobFailed    JobStatus = "FAILED"
)

// Terminal reports whether the job has finished (STOPPED, SUCCEEDED or
// FAILED).
func (s JobStatus) Terminal() bool {
	return s == JobStopped || s == JobSucceeded || s == JobFailed
}

// JobSubmission is the body of POST /api/jobs/. Zero fields are left out.
type JobSubmission struct {
	// Entrypoint is the shell command the job runs. Required.
	Entrypoint string `json:"entrypoint"`
	// SubmissionID identifies the job. Optional: when empty the client
	// generates one ("raytpu_<random>") before the first attempt, so that
	// every retry carries the same id.
	SubmissionID string `json:"submission_id,omitempty"`
	// RuntimeEnv is the job's runtime_env. A local WorkingDir must be
	// uploaded first (Client.PrepareRuntimeEnv).
	RuntimeEnv *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	// Metadata is free-form job metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	// EntrypointNumCPUs, EntrypointNumGPUs, EntrypointMemory (bytes) and
	// EntrypointResources reserve resources for the entrypoint command.
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs   float64            `json:"entrypoint_num_gpus,omitempty"`
	EntrypointMemory    int64              `json:"entrypoint_memory,omitempty"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
	// EntrypointLabelSelector places the entrypoint on nodes with these
	// labels.
	EntrypointLabelSelector map[string]string `json:"entrypoint_label_selector,omitempty"`
}

// DriverInfo describes a job's driver process.
type DriverInfo struct {
	ID            string `json:"id"`
	NodeIPAddress string `json:"node_ip_address"`
	PID           string `json:"pid"`
}

// JobInfo is a job as GET /api/jobs/{id} and GET /api/jobs/ describe it.
type JobInfo struct {
	// Type is "SUBMISSION" for jobs of the Jobs API, "DRIVER" for drivers
	// that connected on their own (ListJobs returns both).
	Type         string      `json:"type"`
	JobID        string      `json:"job_id,omitempty"`
	SubmissionID string      `json:"submission_id,omitempty"`
	DriverInfo   *DriverInfo `json:"driver_info,omitempty"`
	Status       JobStatus   `json:"status"`
	Entrypoint   string      `json:"entrypoint"`
	Message      string      `json:"message,omitempty"`
	ErrorType    string      `json:"error_type,omitempty"`
	// StartTime and EndTime are Unix times in milliseconds (0 when unset).
	StartTime               int64                  `json:"start_time,omitempty"`
	EndTime                 int64                  `json:"end_time,omitempty"`
	Metadata                map[string]string      `json:"metadata,omitempty"`
	RuntimeEnv              *runtimeenv.RuntimeEnv `json:"runtime_env,omitempty"`
	EntrypointNumCPUs       float64                `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs       float64                `json:"entrypoint_num_gpus,omitempty"`
	EntrypointMemory        int64                  `json:"entrypoint_memory,omitempty"`
	EntrypointResources     map[string]float64     `json:"entrypoint_resources,omitempty"`
	DriverAgentHTTPAddress  string                 `json:"driver_agent_http_address,omitempty"`
	DriverNodeID            string                 `json:"driver_node_id,omitempty"`
	DriverExitCode          *int                   `json:"driver_exit_code,omitempty"`
	EntrypointLabelSelector map[string]string      `json:"entrypoint_label_selector,omitempty"`
}

// Started returns StartTime as a time.Time (zero when unset).
func (j JobInfo) Started() time.Time { return msTime(j.StartTime) }

// Ended returns EndTime as a time.Time (zero when unset).
func (j JobInfo) Ended() time.Time { return msTime(j.EndTime) }

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// VersionInfo is the answer of GET /api/version.
type VersionInfo struct {
	// Version is the Jobs API version ("4" on Ray 2.60).
	Version     string `json:"version"`
	RayVersion  string `json:"ray_version"`
	RayCommit   string `json:"ray_commit"`
	SessionName string `json:"session_name"`
}

// Version returns the dashboard's API and Ray versions.
func (c *Client) Version(ctx context.Context) (VersionInfo, error) {
	if err := c.check("Version"); err != nil {
		return VersionInfo{}, err
	}
	var v VersionInfo
	err := c.getJSON(ctx, "/api/version", &v)
	return v, err
}

// NewSubmissionID returns a fresh submission id, "raytpu_" and 16
// lowercase letters and digits.
func NewSubmissionID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [16]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "raytpu_" + string(b[:])
}

// jobPath is the (unescaped) path of a job resource; the URL escapes it.
func jobPath(id string, suffix string) string {
	return "/api/jobs/" + id + suffix
}

// checkID rejects ids the dashboard's routes cannot address.
func checkID(op, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("ray: %s: %w: empty id", op, ErrInvalid)
	case strings.ContainsAny(id, "/\x00"):
		return fmt.Errorf("ray: %s: %w: id %q contains '/' or NUL", op, ErrInvalid, id)
	}
	return nil
}

// SubmitJob submits a job and returns its submission id.
//
// The submission id is fixed before the first attempt (generated when
// sub.SubmissionID is empty), so retries after a lost answer, a reset
// connection or a 5xx carry the same id. When a retry is rejected because
// that id already exists, the job is read back: if it exists with the same
// entrypoint, an earlier attempt created it and SubmitJob succeeds. A job is
// never submitted under a second id. A first attempt rejected as a
// duplicate returns an error matching ErrAlreadyExists.
//
// A dashboard that answers HTTP 405 (still starting) is waited for up to
// RetryPolicy.StartupWait, as every request is; those attempts never
// reached Ray's Jobs API, so a later duplicate still means an earlier
// attempt of this call created the job, which is confirmed by reading it
// back.
func (c *Client) SubmitJob(ctx context.Context, sub JobSubmission) (string, error) {
	if err := c.check("SubmitJob"); err != nil {
		return "", err
	}
	if strings.TrimSpace(sub.Entrypoint) == "" {
		return "", fmt.Errorf("ray: SubmitJob: %w: entrypoint is empty", ErrInvalid)
	}
	if sub.RuntimeEnv != nil {
		if wd := sub.RuntimeEnv.WorkingDir; wd != "" && !isURI(wd) {
			return "", fmt.Errorf("ray: SubmitJob: %w: runtime_env.working_dir %q is a local path; upload it first with Client.PrepareRuntimeEnv", ErrInvalid, wd)
		}
		for _, m := range sub.RuntimeEnv.PyModules {
			if !isURI(m) {
				return "", fmt.Errorf("ray: SubmitJob: %w: runtime_env.py_modules entry %q is a local path; upload it first with Client.PrepareRuntimeEnv", ErrInvalid, m)
			}
		}
	}
	if sub.SubmissionID == "" {
		sub.SubmissionID = c.newID()
	} else if err := checkID("SubmitJob", sub.SubmissionID); err != nil {
		return "", err
	}
	body, err := json.Marshal(sub)
	if err != nil {
		return "", fmt.Errorf("ray: SubmitJob: %w", err)
	}
	r := request{method: http.MethodPost, path: "/api/jobs/", body: body, ctype: "application/json"}
	var ans answer
	attempts, err := c.withRetry(ctx, c.retry.MaxAttempts, "job submission", func() error {
		var err error
		ans, err = c.once(ctx, r)
		return err
	}, slog.String("submission_id", sub.SubmissionID))
	switch {
	case err == nil:
		var out struct {
			SubmissionID string `json:"submission_id"`
		}
		if derr := decode(r.method, r.path, ans.body, &out); derr != nil {
			return sub.SubmissionID, derr
		}
		if out.SubmissionID == "" {
			out.SubmissionID = sub.SubmissionID
		}
		return out.SubmissionID, nil
	case errors.Is(err, ErrAlreadyExists):
		// A duplicate is not transient, so it ends the attempts. On the
		// first attempt the id was someone else's; on a retry an earlier
		// attempt of ours may have created the job: read it back.
		if attempts == 1 {
			return "", err
		}
		return c.confirmSubmitted(ctx, sub, err)
	case (transient(err) || requestTimedOut(err)) && ctx.Err() == nil:
		// Every attempt failed (or the last got no answer in time), but
		// one may have reached the server: look.
		if id, cerr := c.confirmSubmitted(ctx, sub, err); cerr == nil {
			return id, nil
		}
	}
	return "", err
}

// confirmSubmitted reads the job back after an ambiguous submission and
// succeeds when it exists with sub's entrypoint.
func (c *Client) confirmSubmitted(ctx context.Context, sub JobSubmission, cause error) (string, error) {
	job, err := c.GetJob(ctx, sub.SubmissionID)
	if err != nil {
		return "", fmt.Errorf("%w (and reading job %s back failed: %v)", cause, sub.SubmissionID, err)
	}
	if job.Entrypoint != sub.Entrypoint {
		return "", fmt.Errorf("%w: job %s exists with another entrypoint %q", cause, sub.SubmissionID, job.Entrypoint)
	}
	c.logger.DebugContext(ctx, "ray: job submission confirmed by reading it back", "submission_id", sub.SubmissionID)
	return sub.SubmissionID, nil
}

// GetJob returns a job by submission id (or job id).
func (c *Client) GetJob(ctx context.Context, id string) (JobInfo, error) {
	if err := c.check("GetJob"); err != nil {
		return JobInfo{}, err
	}
	var j JobInfo
	if err := checkID("GetJob", id); err != nil {
		return j, err
	}
	err := c.getJSON(ctx, jobPath(id, ""), &j)
	return j, err
}

// ListJobs returns every job the cluster knows: submitted jobs and plain
// drivers (Type "DRIVER").
func (c *Client) ListJobs(ctx context.Context) ([]JobInfo, error) {
	if err := c.check("ListJobs"); err != nil {
		return nil, err
	}
	var js []JobInfo
	err := c.getJSON(ctx, "/api/jobs/", &js)
	return js, err
}

// JobLogs returns the job's driver log so far.
func (c *Client) JobLogs(ctx context.Context, id string) (string, error) {
	if err := c.check("JobLogs"); err != nil {
		return "", err
	}
	if err := checkID("JobLogs", id); err != nil {
		return "", err
	}
	var out struct {
		Logs string `json:"logs"`
	}
	err := c.getJSON(ctx, jobPath(id, "/logs"), &out)
	return out.Logs, err
}

// StopJob asks Ray to stop the job. It reports false when the job had
// already finished. Stopping is asynchronous: wait with WaitJob.
func (c *Client) StopJob(ctx context.Context, id string) (bool, error) {
	if err := c.check("StopJob"); err != nil {
		return false, err
	}
	if err := checkID("StopJob", id); err != nil {
		return false, err
	}
	path := jobPath(id, "/stop")
	ans, _, err := c.do(ctx, request{method: http.MethodPost, path: path, retry: true})
	if err != nil {
		return false, err
	}
	var out struct {
		Stopped bool `json:"stopped"`
	}
	err = decode(http.MethodPost, path, ans.body, &out)
	return out.Stopped, err
}

// DeleteJob deletes a finished job's record and logs. Deleting a job that
// is still PENDING or RUNNING fails with an error matching ErrConflict.
func (c *Client) DeleteJob(ctx context.Context, id string) (bool, error) {
	if err := c.check("DeleteJob"); err != nil {
		return false, err
	}
	if err := checkID("DeleteJob", id); err != nil {
		return false, err
	}
	path := jobPath(id, "")
	ans, attempts, err := c.do(ctx, request{method: http.MethodDelete, path: path, retry: true})
	if err != nil {
		// A retry after a lost answer finds the job gone: it was deleted.
		if attempts > 1 && errors.Is(err, ErrNotFound) {
			return true, nil
		}
		return false, err
	}
	var out struct {
		Deleted bool `json:"deleted"`
	}
	err = decode(http.MethodDelete, path, ans.body, &out)
	return out.Deleted, err
}

// WaitOptions configures WaitJob.
type WaitOptions struct {
	// PollInterval is the time between polls. Default 1s.
	PollInterval time.Duration
	// OnTransition, if set, is called with the job whenever its status
	// differs from the previous poll's (and on the first poll).
	OnTransition func(JobInfo)
}

// WaitJob polls the job until it reaches a terminal status and returns it.
// A first poll that gets no answer at all (after GetJob's own retries)
// ends the wait at once with an error matching ErrUnreachable and
// ErrUnavailable that names the dashboard's address. Later polls that fail
// with ErrUnavailable are tolerated until ctx ends; other errors end the
// wait.
func (c *Client) WaitJob(ctx context.Context, id string, opts WaitOptions) (JobInfo, error) {
	if err := c.check("WaitJob"); err != nil {
		return JobInfo{}, err
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = time.Second
	}
	var prev JobStatus
	answered := false
	var lastErr error
	for {
		j, err := c.GetJob(ctx, id)
		switch {
		case errors.Is(err, ErrUnreachable) && !answered && ctx.Err() == nil:
			// Never answered: a wrong address or a cluster that is down.
			return j, c.unreachable("WaitJob "+id, err)
		case err == nil:
			answered = true
			if j.Status != prev && opts.OnTransition != nil {
				opts.OnTransition(j)
			}
			prev = j.Status
			if j.Status.Terminal() {
				return j, nil
			}
		case errors.Is(err, ErrUnavailable) && ctx.Err() == nil:
			lastErr = err
			c.logger.DebugContext(ctx, "ray: WaitJob poll failed", "submission_id", id, "error", err.Error())
		case ctx.Err() == nil:
			return j, err
		}
		// A context that ended, during the poll or the sleep, ends the wait.
		if err := c.sleep(ctx, interval); err != nil || ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			if !answered {
				return j, c.silent("WaitJob "+id, err, lastErr)
			}
			return j, fmt.Errorf("ray: WaitJob %s: %w", id, err)
		}
	}
}

// isURI reports whether s looks like "<scheme>://...".
func isURI(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for _, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
