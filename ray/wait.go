package ray

import (
	"errors"
	"fmt"
)

// The waits (WaitJob, WaitServeApplication) tell a dashboard they cannot
// reach from an answer they do not like. Until the dashboard has answered
// once, a poll that gets no answer after its retries (ErrUnreachable)
// ends the wait at once: the address is wrong or the cluster is down, and
// polling for the whole wait would only hide it. Once it has answered, a
// dashboard that stops answering is tolerated until the wait's context
// ends (a head restarting), and the error then says it stopped answering;
// it never reads as "not found".

// unreachable is the error of a wait whose first poll got no answer.
func (c *Client) unreachable(op string, err error) error {
	return fmt.Errorf("ray: %s: cannot reach the Ray dashboard at %s (is the cluster up, and is the address right?): %w", op, Redact(c.base), err)
}

// silent is the error of a wait that ended with ctxErr while the
// dashboard gave no usable answer; lastErr is the last poll's error. It
// matches ctxErr and lastErr's sentinels (ErrUnavailable) with errors.Is.
func (c *Client) silent(op string, ctxErr, lastErr error) error {
	if lastErr == nil {
		return fmt.Errorf("ray: %s: wait ended before the dashboard at %s answered: %w", op, Redact(c.base), ctxErr)
	}
	return fmt.Errorf("ray: %s: wait ended while the dashboard at %s was not answering: %w", op, Redact(c.base), errors.Join(ctxErr, lastErr))
}
