package ray

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// maxLogFrame bounds one websocket message of a log tail.
const maxLogFrame = 64 << 20

// TailJobLogs follows the job's driver log over the dashboard's websocket
// (GET /api/jobs/{id}/logs/tail). It yields chunks of log text as Ray sends
// them (each usually several lines) until the job ends and Ray closes the
// socket, then stops. A failure is yielded once as the error, then the
// sequence ends; an unknown job yields an error matching ErrNotFound.
// Breaking out of the loop or cancelling ctx closes the socket.
func (c *Client) TailJobLogs(ctx context.Context, id string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := c.check("TailJobLogs"); err != nil {
			yield("", err)
			return
		}
		if err := checkID("TailJobLogs", id); err != nil {
			yield("", err)
			return
		}
		path := jobPath(id, "/logs/tail")
		u := c.url(path)
		switch u.Scheme {
		case "https":
			u.Scheme = "wss"
		default:
			u.Scheme = "ws"
		}
		// The request timeout bounds the opening handshake only: the
		// stream lasts as long as the job. The dial's context must
		// outlive the dial (the connection keeps it), so the bound is a
		// timer that cancels it only while the dial runs.
		dctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		dog := time.AfterFunc(c.timeout, func() { cancel(errRequestTimeout) })
		conn, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{
			HTTPClient: c.hc,
			HTTPHeader: c.header.Clone(),
		})
		dogFired := !dog.Stop()
		if err == nil && dogFired && ctx.Err() == nil {
			// The bound ran out as the handshake ended: the connection
			// is cancelled with it.
			conn.CloseNow()
			err = errRequestTimeout
		}
		if err != nil {
			if dogFired && ctx.Err() == nil {
				yield("", scrubURLError(http.MethodGet, u, &timeoutError{limit: c.timeout}))
				return
			}
			if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != 0 {
				var body []byte
				if resp.Body != nil {
					body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
					resp.Body.Close()
				}
				yield("", c.apiError(resp.StatusCode, http.MethodGet, u.Path, body))
				return
			}
			if ctx.Err() != nil {
				yield("", fmt.Errorf("ray: tail %s: %w", Redact(u), ctx.Err()))
				return
			}
			yield("", scrubURLError(http.MethodGet, u, err))
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(maxLogFrame)
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				switch websocket.CloseStatus(err) {
				case websocket.StatusNormalClosure, websocket.StatusGoingAway:
					return
				}
				if errors.Is(err, io.EOF) {
					return
				}
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield("", fmt.Errorf("ray: tail %s: %w", u.Path, err))
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			if !yield(string(data), nil) {
				conn.Close(websocket.StatusNormalClosure, "")
				return
			}
		}
	}
}
