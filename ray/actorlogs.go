package ray

import (
	"context"
	"net/http"
	"net/url"
)

// ActorLog returns the whole standard output (suffix "out") or standard
// error (suffix "err") of the worker process of an actor, by actor id, as
// the dashboard's log API serves it (GET /api/v0/logs/file?actor_id=..&
// suffix=..&lines=-1), wherever in the cluster the actor runs. A Serve
// replica's actor id is in ReplicaDetails.ActorID. Reading is retried.
func (c *Client) ActorLog(ctx context.Context, actorID, suffix string) (string, error) {
	if err := c.check("ActorLog"); err != nil {
		return "", err
	}
	q := url.Values{"actor_id": {actorID}, "suffix": {suffix}, "lines": {"-1"}}
	ans, _, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v0/logs/file", query: q.Encode(), retry: true})
	if err != nil {
		return "", err
	}
	return string(ans.body), nil
}
