package ray

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinels a *ServeApplicationError matches with errors.Is.
var (
	// ErrDeployFailed: the Serve application is DEPLOY_FAILED (its build
	// or a deployment's replicas failed).
	ErrDeployFailed = errors.New("ray: Serve application failed to deploy")
	// ErrUnhealthy: the Serve application is UNHEALTHY (a deployment's
	// replicas fail their health checks).
	ErrUnhealthy = errors.New("ray: Serve application is unhealthy")
)

// ServeApplicationError says why a Serve application is not RUNNING. It
// matches ErrDeployFailed (Status DEPLOY_FAILED), ErrUnhealthy (UNHEALTHY)
// or ErrNotFound (NOT_STARTED: Ray has no such application) with
// errors.Is. When the wait ended with its context, Err is the context's
// error (errors.Is(err, context.DeadlineExceeded) holds) and Status is the
// last status seen, such as DEPLOYING. A nil *ServeApplicationError's
// Error is "<nil>"; it matches no sentinel and unwraps to nil.
type ServeApplicationError struct {
	Name   string
	Status ServeApplicationStatus
	// Message is Ray's: the application's message followed by the message
	// of every deployment that is not HEALTHY (a constructor's traceback,
	// "taken more than 30s to be scheduled", a failed health check).
	Message string
	// Details is the application as last seen; nil for NOT_STARTED.
	Details *ApplicationDetails
	// Err is the context's error when the wait was cut short.
	Err error
}

func (e *ServeApplicationError) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ray: Serve application %q is %s", e.Name, e.Status)
	if e.Err != nil {
		fmt.Fprintf(&b, " (wait ended: %v)", e.Err)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Is maps the status onto the sentinels.
func (e *ServeApplicationError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrDeployFailed:
		return e.Status == ServeAppDeployFailed
	case ErrUnhealthy:
		return e.Status == ServeAppUnhealthy
	case ErrNotFound:
		return e.Status == ServeAppNotStarted
	}
	return false
}

// Unwrap returns the context's error, if the wait was cut short.
func (e *ServeApplicationError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// WaitServeOptions configures WaitServeApplication.
type WaitServeOptions struct {
	// PollInterval is the time between polls. Default 1s.
	PollInterval time.Duration
	// OnTransition, if set, is called with the application on the first
	// poll and whenever its status or one of its deployments' statuses
	// differs from the previous poll's.
	OnTransition func(ApplicationDetails)
}

// WaitServeApplication polls GET /api/serve/applications/ until the
// application is RUNNING and returns it. It fails with a
// *ServeApplicationError when the application is DEPLOY_FAILED
// (ErrDeployFailed), UNHEALTHY (ErrUnhealthy) or absent (ErrNotFound: Ray
// creates an application when its PUT is answered, so an absent one was
// never deployed or has been deleted), and when ctx ends first, with the
// last status and details seen (a replica that cannot be scheduled keeps
// an application DEPLOYING for ever; the deployments' messages say so).
// A first poll that gets no answer at all (after the read's own retries)
// ends the wait at once with an error matching ErrUnreachable and
// ErrUnavailable that names the dashboard's address. Later polls that
// fail with ErrUnavailable are tolerated until ctx ends; other errors end
// the wait. A wait that ends before the dashboard answered never matches
// ErrNotFound.
func (c *Client) WaitServeApplication(ctx context.Context, name string, opts WaitServeOptions) (ApplicationDetails, error) {
	if err := c.check("WaitServeApplication"); err != nil {
		return ApplicationDetails{}, err
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = time.Second
	}
	var (
		last    *ApplicationDetails
		prevKey string
		lastErr error
	)
	op := fmt.Sprintf("WaitServeApplication %q", name)
	for {
		d, err := c.ServeApplications(ctx)
		switch {
		case errors.Is(err, ErrUnreachable) && last == nil && ctx.Err() == nil:
			// Never answered: a wrong address or a cluster that is down.
			return ApplicationDetails{}, c.unreachable(op, err)
		case err == nil:
			a, ok := d.Applications[name]
			if !ok {
				return ApplicationDetails{}, &ServeApplicationError{Name: name, Status: ServeAppNotStarted,
					Message: fmt.Sprintf("Ray has no Serve application %q (applications: %v)", name, sortedKeys(d.Applications))}
			}
			last = &a
			if k := transitionKey(a); k != prevKey {
				prevKey = k
				if opts.OnTransition != nil {
					opts.OnTransition(a)
				}
			}
			switch a.Status {
			case ServeAppRunning:
				return a, nil
			case ServeAppDeployFailed, ServeAppUnhealthy:
				return a, appError(a, nil)
			}
		case errors.Is(err, ErrUnavailable) && ctx.Err() == nil:
			lastErr = err
			c.logger.DebugContext(ctx, "ray: WaitServeApplication poll failed", "application", name, "error", err.Error())
		case ctx.Err() == nil:
			return ApplicationDetails{}, err
		}
		if err := c.sleep(ctx, interval); err != nil || ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			if last == nil {
				// No answer saying the application is absent: not ErrNotFound.
				return ApplicationDetails{}, c.silent(op, err, lastErr)
			}
			return *last, appError(*last, err)
		}
	}
}

// appError builds the error for an application that is not RUNNING.
func appError(a ApplicationDetails, cause error) *ServeApplicationError {
	msgs := []string{}
	if m := strings.TrimSpace(a.Message); m != "" {
		msgs = append(msgs, m)
	}
	for _, dn := range sortedKeys(a.Deployments) {
		dep := a.Deployments[dn]
		if dep.Status != ServeDeploymentHealthy && strings.TrimSpace(dep.Message) != "" {
			msgs = append(msgs, fmt.Sprintf("deployment %q is %s: %s", dn, dep.Status, strings.TrimSpace(dep.Message)))
		}
	}
	cp := a
	return &ServeApplicationError{Name: a.Name, Status: a.Status, Message: strings.Join(msgs, "\n"), Details: &cp, Err: cause}
}

// transitionKey summarises the statuses a transition is reported on.
func transitionKey(a ApplicationDetails) string {
	parts := []string{string(a.Status)}
	for _, dn := range sortedKeys(a.Deployments) {
		parts = append(parts, dn+"="+string(a.Deployments[dn].Status))
	}
	return strings.Join(parts, ",")
}
