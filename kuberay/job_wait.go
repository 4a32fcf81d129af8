package kuberay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/raytpu/raytpu/backend"
)

// WaitJob follows RayJob name until KubeRay reports its deployment Complete,
// Failed or ValidationFailed, calling opts.OnStatus on every change of the
// deployment status, the Ray job status or the message, and returns the
// outcome as Run does: its Output is the launcher's result, read from the
// submitter pod's log (see jobOutput). The message of a RayJob that did
// not succeed ends with the Warning events KubeRay recorded against it.
//
// A RayJob that waits in a Kueue queue (Options.Queue: labeled and still
// suspended) is PENDING with a message saying why, read from Kueue's
// Workload, LocalQueue and ClusterQueue and read again every
// queuePollInterval while it waits: "queued by Kueue: ClusterQueue
// team-a-cq, needs 8 google.com/tpu, 8 in use; <Kueue's reason>" (a
// Backend made by NewWithClient has no client to read them, and says so).
func (b *Backend) WaitJob(ctx context.Context, name string, opts backend.RunOptions) (*backend.Outcome, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, errors.New("kuberay: WaitJob: the RayJob's name is required (the name Apply was given)")
	}
	ns := b.opts.Namespace
	lw := cache.NewListWatchFromClient(b.client.RayV1().RESTClient(), "rayjobs", ns, fields.OneTermEqualSelector("metadata.name", name))
	rep := &jobReporter{b: b, name: name, onStatus: opts.OnStatus}
	defer rep.watchQueue(ctx)()
	var final *rayv1.RayJob
	_, err := watchtools.UntilWithSync(ctx, lw, &rayv1.RayJob{}, nil, func(ev watch.Event) (bool, error) {
		switch ev.Type {
		case watch.Deleted:
			return false, fmt.Errorf("kuberay: RayJob %s/%s was deleted before it finished", ns, name)
		case watch.Added, watch.Modified:
		default:
			return false, nil
		}
		job, ok := ev.Object.(*rayv1.RayJob)
		if !ok {
			return false, nil
		}
		rep.seen(ctx, job)
		if jobFinished(job) {
			final = job
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("kuberay: following RayJob %s/%s: %w", ns, name, err)
	}
	st := jobStatusOf(final)
	output, err := b.jobOutput(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &backend.Outcome{Backend: Name, Ran: true, ID: name, State: st.State, Message: st.Message, Output: output}
	if st.State != backend.StateSucceeded {
		if evs := b.warningEvents(ctx, KindRayJob, name, 2*time.Second); len(evs) > 0 {
			out.Message += "; events: " + strings.Join(evs, "; ")
		}
		return out, &backend.RunError{Outcome: out}
	}
	return out, nil
}

// jobFinished reports whether KubeRay is done with the RayJob's run.
func jobFinished(job *rayv1.RayJob) bool {
	switch job.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		return true
	}
	return false
}

// jobStatusOf reads a RayJob's status as a backend.Status. The message names
// KubeRay's deployment status, then Ray's job status and KubeRay's reason
// and message when there are any:
// "Running", "Running/RUNNING", "Failed: DeadlineExceeded: ...".
func jobStatusOf(job *rayv1.RayJob) backend.Status {
	s := job.Status
	st := backend.Status{ID: job.Name, Time: time.Now()}
	switch s.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete:
		st.State = backend.StateSucceeded
		if s.JobStatus == rayv1.JobStatusStopped {
			st.State = backend.StateStopped
		}
	case rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		st.State = backend.StateFailed
	case rayv1.JobDeploymentStatusRunning:
		st.State = backend.StateRunning
		if s.JobStatus == rayv1.JobStatusPending {
			st.State = backend.StatePending
		}
	case rayv1.JobDeploymentStatusSuspended:
		st.State = backend.StateStopped
	default: // New, Initializing, Waiting, Suspending, Retrying
		st.State = backend.StatePending
	}
	msg := string(s.JobDeploymentStatus)
	if msg == "" {
		msg = "New"
	}
	if s.JobStatus != "" {
		msg += "/" + string(s.JobStatus)
	}
	if s.Reason != "" && string(s.Reason) != string(s.JobDeploymentStatus) {
		msg += ": " + string(s.Reason)
	}
	if s.Message != "" {
		msg += ": " + s.Message
	}
	st.Message = msg
	return st
}
