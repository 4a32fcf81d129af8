package ray

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how patiently a retry-safe request is
// retried. Backoff is jittered: attempt n waits a random duration in
// [d/2, d] where d = min(InitialBackoff * 2^(n-1), MaxBackoff).
type RetryPolicy struct {
	// MaxAttempts counts the first attempt: 1 disables retries. Default 4.
	MaxAttempts int
	// InitialBackoff is the wait before the first retry. Default 200ms.
	InitialBackoff time.Duration
	// MaxBackoff caps the wait. Default 5s.
	MaxBackoff time.Duration
	// AttemptTimeout bounds each attempt, answer body included, so that a
	// stalled answer is retried. Default 0: the client's request timeout
	// bounds an attempt (WithRequestTimeout), and a request that used it
	// up is not retried.
	AttemptTimeout time.Duration
	// StartupWait is how long a request answered HTTP 405 is retried as
	// a dashboard that is still starting. Every request the client sends
	// is one Ray 2.60's dashboard serves with that method, so a 405 says
	// the address does not (yet) answer as that dashboard: a starting
	// head, or a port that a Prometheus metrics exporter of Ray holds
	// (Ray's exporters answer 405 to everything but GET). Such attempts
	// do not count against MaxAttempts; the client logs at Info level
	// when the wait starts and ends. When it lasts, the error names the
	// dashboard's address and matches ErrDashboardNotServing and the
	// *APIError. Default 60s.
	StartupWait time.Duration
}

// DefaultRetryPolicy returns the policy a client uses when no WithRetry
// option is given. It is a value: changing it changes no client.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: defaultMaxAttempts, InitialBackoff: defaultInitialBackoff, MaxBackoff: defaultMaxBackoff, StartupWait: defaultStartupWait}
}

const (
	defaultMaxAttempts    = 4
	defaultInitialBackoff = 200 * time.Millisecond
	defaultMaxBackoff     = 5 * time.Second
	defaultStartupWait    = 60 * time.Second
	// maxStartupPoll caps the pause between attempts while a dashboard
	// starts, so that a ready one is noticed within a second.
	maxStartupPoll = time.Second
)

// WithRetry sets the retry policy for retry-safe requests. Zero fields take
// their defaults from DefaultRetryPolicy.
func WithRetry(policy RetryPolicy) Option {
	return optionFunc(func(c *Client) error {
		// A copy: the option may be applied by several NewClient calls at
		// once.
		p := policy
		if p.MaxAttempts < 0 || p.InitialBackoff < 0 || p.MaxBackoff < 0 || p.AttemptTimeout < 0 || p.StartupWait < 0 {
			return fmt.Errorf("ray: WithRetry: negative field in %+v", p)
		}
		if p.MaxAttempts == 0 {
			p.MaxAttempts = defaultMaxAttempts
		}
		if p.InitialBackoff == 0 {
			p.InitialBackoff = defaultInitialBackoff
		}
		if p.StartupWait == 0 {
			p.StartupWait = defaultStartupWait
		}
		if p.MaxBackoff == 0 {
			p.MaxBackoff = max(defaultMaxBackoff, p.InitialBackoff)
		}
		if p.MaxBackoff < p.InitialBackoff {
			return fmt.Errorf("ray: WithRetry: MaxBackoff %v < InitialBackoff %v", p.MaxBackoff, p.InitialBackoff)
		}
		c.retry = p
		return nil
	})
}

// withRetry runs try until it succeeds, fails with an error that is not
// transient, has run maxAttempts times, or ctx ends, sleeping the policy's
// backoff between attempts. It returns how many attempts ran and the last
// error. Only calls that are safe to repeat (reads, stop, delete, package
// GET/PUT, a submission under a fixed submission_id) may come here.
//
// An attempt answered HTTP 405 (the dashboard not serving the route yet,
// see RetryPolicy.StartupWait) is retried apart: it neither counts as an
// attempt (it never reached the route, so it cannot have acted) nor ends
// the retries until StartupWait has passed since the first one.
func (c *Client) withRetry(ctx context.Context, maxAttempts int, what string, try func() error, attrs ...slog.Attr) (attempts int, err error) {
	var startingSince time.Time
	polls := 0
	for attempt := 1; ; attempt++ {
		err = try()
		if ae := notServing(err); ae != nil && ctx.Err() == nil {
			attempt-- // it did not reach the route
			polls++
			if startingSince.IsZero() {
				startingSince = time.Now()
				c.logger.LogAttrs(ctx, slog.LevelInfo, "ray: the dashboard does not serve "+ae.Method+" "+ae.Path+" yet (HTTP 405); waiting for it to start", append(attrs,
					slog.String("dashboard", Redact(c.base)), slog.Duration("up_to", c.retry.StartupWait))...)
			}
			waited := time.Since(startingSince)
			if waited >= c.retry.StartupWait {
				return attempt, &notServingError{dashboard: Redact(c.base), waited: waited, err: ae}
			}
			// The last pause ends at the bound, for one more try there.
			wait := min(c.retry.backoff(polls), maxStartupPoll, c.retry.StartupWait-waited)
			if serr := c.sleep(ctx, wait); serr != nil {
				return attempt, fmt.Errorf("%w (last error: %v)", serr, &notServingError{dashboard: Redact(c.base), waited: time.Since(startingSince), err: ae})
			}
			continue
		}
		if !startingSince.IsZero() {
			c.logger.LogAttrs(ctx, slog.LevelInfo, "ray: the dashboard serves the route now", append(attrs,
				slog.String("dashboard", Redact(c.base)), slog.String("request", what), slog.Duration("waited", time.Since(startingSince)))...)
			startingSince = time.Time{}
		}
		if err == nil {
			return attempt, nil
		}
		if attempt >= maxAttempts || !transient(err) || ctx.Err() != nil {
			return attempt, err
		}
		wait := c.retry.backoff(attempt)
		c.logger.LogAttrs(ctx, slog.LevelDebug, "ray: retrying "+what, append(attrs,
			slog.Int("attempt", attempt), slog.Duration("backoff", wait), slog.String("error", err.Error()))...)
		if serr := c.sleep(ctx, wait); serr != nil {
			return attempt, fmt.Errorf("%w (last error: %v)", serr, err)
		}
	}
}

// backoff returns the wait before retry number n (1-based).
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
