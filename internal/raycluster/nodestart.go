package raycluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// startedMessage is what `ray start` prints once its node is registered
// with the GCS (ray/scripts/scripts.py), head or worker.
const startedMessage = "Ray runtime started."

// failedMessage starts the traceback `ray start` prints when its start
// failed (the dashboard or the raylet missed its deadline). The process can
// linger after it, waiting on children, so the log is what tells.
const failedMessage = "Traceback (most recent call last)"

// startState reads p's `ray start` log: started, failed (with the
// exception line that says why), or neither yet. Python writes a traceback
// line by line, so a failure counts only once its exception line (the
// first line after the header that is not indented) is in the log; until
// then the log is read again on the next poll.
func startState(p *proc) (started bool, failed error) {
	b, err := os.ReadFile(filepath.Join(p.Dir, "ray-start.log"))
	if err != nil {
		return false, nil
	}
	if bytes.Contains(b, []byte(startedMessage)) {
		return true, nil
	}
	if why, ok := tracebackReason(b); ok {
		return false, fmt.Errorf("ray start for %s failed: %s", p.Name, why)
	}
	return false, nil
}

// tracebackReason returns the exception line of the last complete Python
// traceback in log ("AssertionError: ..."), and false while there is none
// or its exception line is not written yet.
func tracebackReason(log []byte) (string, bool) {
	i := bytes.LastIndex(log, []byte(failedMessage))
	if i < 0 {
		return "", false
	}
	rest := log[i:]
	for {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return "", false // only a line that ends in a newline is whole
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' && !bytes.HasPrefix(line, []byte(failedMessage)) {
			return string(bytes.TrimSpace(line)), true
		}
	}
}

// startHead spawns the head under the machine-wide start lock and waits
// until its `ray start` reports it registered (the dashboard starts first,
// the raylet then gets Ray's fixed 30 s to register) and its dashboard
// answers. A head that does not come up is a *headError, which Start
// answers by starting the cluster again.
func (c *Cluster) startHead(ctx context.Context, ip string, args []string, cfg Config) error {
	slot, err := acquireStartSlot(ctx)
	if err != nil {
		return err
	}
	defer slot.release()
	p, err := c.spawn(ctx, "head", ip, "h", args, cfg.HeadEnv, cfg.Detach)
	if err != nil {
		return err
	}
	if err := c.waitStarted(ctx, p); err != nil {
		return &headError{c.startError("head did not come up", err)}
	}
	if err := c.waitDashboard(ctx); err != nil {
		return &headError{c.startError("head did not come up", err)}
	}
	return nil
}

// startWorker spawns one worker node under the machine-wide start lock and
// waits until its `ray start` reports the node registered. A `ray start`
// that failed for want of time (transientStartFailure: Ray's fixed 30 s
// registration deadline missed on a starved machine, say) is started again,
// in a fresh temp dir on the same address, up to maxRestarts times, after a
// pause that grows with each try; any other failure (Ray refusing the
// node's arguments) is returned at once.
func (c *Cluster) startWorker(ctx context.Context, name, ip, sub string, args []string, env map[string]string, detach bool) error {
	slot, err := acquireStartSlot(ctx)
	if err != nil {
		return err
	}
	defer slot.release()
	p, err := c.spawn(ctx, name, ip, sub, args, env, detach)
	if err != nil {
		return err
	}
	for {
		err := c.waitStarted(ctx, p)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !transientStartFailure(p) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(p.restarts+1) * 2 * time.Second):
		}
		np, rerr := c.restart(ctx, p)
		if rerr != nil {
			return rerr
		}
		if np == nil {
			return fmt.Errorf("%w (started %d times)", err, p.restarts+1)
		}
		p = np
	}
}

// tracebackGrace is how long a traceback may stay without its exception
// line before waitStarted reports the failure with the log's last line.
// Python writes a whole traceback in well under a second; this only keeps
// a start whose output stopped mid-traceback from waiting out ctx.
var tracebackGrace = 10 * time.Second

// waitStarted waits until p's `ray start` log says the node started, or
// its start failed or its process exited (an error), or ctx ends.
func (c *Cluster) waitStarted(ctx context.Context, p *proc) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var tracebackSince time.Time
	for {
		started, failed := startState(p)
		if started {
			return nil
		}
		if failed != nil {
			return failed
		}
		if tracebackSince.IsZero() {
			if b, err := os.ReadFile(filepath.Join(p.Dir, "ray-start.log")); err == nil && bytes.Contains(b, []byte(failedMessage)) {
				tracebackSince = time.Now()
			}
		} else if time.Since(tracebackSince) > tracebackGrace {
			return fmt.Errorf("ray start for %s failed: %s", p.Name, tailFile(filepath.Join(p.Dir, "ray-start.log"), 1))
		}
		select {
		case <-p.done:
			// The log is complete once the process is gone: read it
			// again so a failure that raced the exit keeps its reason.
			if _, failed := startState(p); failed != nil {
				return failed
			}
			return fmt.Errorf("ray start for %s exited: %v", p.Name, p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("ray start for %s: %w", p.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitSummary waits until the dashboard's node summary (GET
// /nodes?view=summary, what `raytpu top`, `serve wait`'s diagnosis and the
// Serve checks read) lists want ALIVE nodes, each with physical stats from
// its dashboard agent (the agent that serves the node's logs and metrics
// is up), and every node in tpus (IP to
// chips; the posing hosts with a device-plugin emulator) reports that many
// TPU chips in its physical stats, which its agent reads from the emulator
// every few seconds. The summary fills in from the dashboard's own feeds,
// after the state API already shows every node.
func (c *Cluster) waitSummary(ctx context.Context, want int, tpus map[string]int) error {
	hc := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		if nodes, err := c.summary(ctx, hc); err != nil {
			last = err
		} else if msg := summaryGap(nodes, want, tpus); msg != "" {
			last = errors.New(msg)
		} else {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %v", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// summaryNode is what waitSummary reads of a node summary entry. (Package
// ray reads the same endpoint for users; its tests start clusters with
// this package, so this package does not import it.)
type summaryNode struct {
	IP    string
	Alive bool
	// TPUs counts the chips in the node's latest physical stats, -1 when
	// it has none yet.
	TPUs int
}

// summary reads GET /nodes?view=summary.
func (c *Cluster) summary(ctx context.Context, hc *http.Client) ([]summaryNode, error) {
	resp, err := c.get(ctx, hc, "/nodes?view=summary")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("node summary: HTTP %d", resp.StatusCode)
	}
	var out struct {
		Data struct {
			Summary []struct {
				Raylet struct {
					IP    string `json:"nodeManagerAddress"`
					State string `json:"state"`
				} `json:"raylet"`
				TPUs *[]json.RawMessage `json:"tpus"`
			} `json:"summary"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("node summary: %w", err)
	}
	nodes := make([]summaryNode, 0, len(out.Data.Summary))
	for _, s := range out.Data.Summary {
		n := summaryNode{IP: s.Raylet.IP, Alive: s.Raylet.State == "ALIVE", TPUs: -1}
		if s.TPUs != nil {
			n.TPUs = len(*s.TPUs)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// summaryGap says what the node summary still lacks, or "".
func summaryGap(nodes []summaryNode, want int, tpus map[string]int) string {
	alive := 0
	for _, n := range nodes {
		if !n.Alive {
			continue
		}
		alive++
		if n.TPUs < 0 {
			// No physical stats yet: the node's dashboard agent, which
			// also serves its logs (the log API answers "Agent for node id
			// ... doesn't exist" until it registers), is not up.
			return fmt.Sprintf("node %s: its dashboard agent has not reported yet", n.IP)
		}
		if chips, ok := tpus[n.IP]; ok && n.TPUs != chips {
			return fmt.Sprintf("node %s reports %d TPU chips in its stats, want %d", n.IP, max(n.TPUs, 0), chips)
		}
	}
	if alive < want {
		return fmt.Sprintf("%d of %d nodes ALIVE", alive, want)
	}
	return ""
}

// transientMessages are what `ray start` says when a node failed for want
// of time or CPU rather than for its arguments (Ray 2.60's wording, in
// ray/_private/node.py and services.py).
var transientMessages = []string{
	"timed out",  // "The current node timed out during startup ..."
	"overloaded", // "... or the GCS has become overloaded."
	"Unable to connect", "Failed to connect", "failed to connect",
	"Failed to start the dashboard",
	"DEADLINE_EXCEEDED", "UNAVAILABLE",
}

// transientStartFailure reports whether p's failed start is worth another
// try: its process was killed by a signal, or its log says it ran out of
// time.
func transientStartFailure(p *proc) bool {
	select {
	case <-p.done:
		var ee *exec.ExitError
		if errors.As(p.waitErr, &ee) && ee.ExitCode() == -1 {
			return true // killed by a signal
		}
	default:
	}
	b, err := os.ReadFile(filepath.Join(p.Dir, "ray-start.log"))
	if err != nil {
		return true
	}
	for _, m := range transientMessages {
		if bytes.Contains(b, []byte(m)) {
			return true
		}
	}
	return false
}
