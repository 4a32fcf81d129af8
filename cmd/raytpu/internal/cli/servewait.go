package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
)

// replicaPoll is how often a Serve wait reads the replica counts, which
// change without the application's or a deployment's status changing.
const replicaPoll = time.Second

// waitApp waits for the application with its dashboard links printed
// first, then its state with the time spent in each and its deployments'
// replicas running out of wanted as progress; a failure, a timeout or an
// application found stuck prints the last status (Ray's messages and the
// diagnosis say why) and fails the command.
func waitApp(ctx context.Context, w io.Writer, s backend.Server, dash links, notes *waitNotes, name string, timeout, stuckAfter time.Duration) error {
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	p := newProgress(w)
	defer notes.printTo(p)()
	p.Link("application", dash.ServeApp(name))
	p.Link("metrics", dash.Metrics())
	stopTick := ticking(p)

	// The replica counts, read between the wait's status changes; a poll
	// that saw another state than the wait's latest (the two race) is
	// dropped, so a state is never shown going back.
	var mu sync.Mutex
	var state backend.ServiceState
	onStatus := func(st *backend.ServiceStatus) {
		mu.Lock()
		defer mu.Unlock()
		state = st.State
		showServeStatus(p, st)
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(replicaPoll)
		defer t.Stop()
		for {
			select {
			case <-pollCtx.Done():
				return
			case <-t.C:
				st, err := s.Status(pollCtx, name)
				mu.Lock()
				if err == nil && pollCtx.Err() == nil && st.State == state {
					showServeStatus(p, st)
				}
				mu.Unlock()
			}
		}
	})
	st, err := s.Wait(ctx, name, backend.WaitOptions{OnStatus: onStatus, StuckAfter: stuckAfter})
	stopPoll()
	wg.Wait()
	stopTick()

	var se *backend.ServiceError
	switch {
	case errors.As(err, &se):
		showServeStatus(p, se.Status)
		p.Done(terminalSafe(string(se.Status.State)))
		printStatus(w, se.Status)
	case st != nil:
		showServeStatus(p, st)
		p.Done(terminalSafe(string(st.State)))
		printStatus(w, st)
	default:
		p.Done(terminalSafe(gaveUp(err)))
	}
	return err
}

// showServeStatus shows an application's state and its deployments'
// replicas running out of wanted.
func showServeStatus(p *progress.Printer, st *backend.ServiceStatus) {
	if st == nil {
		return
	}
	p.State(terminalSafe(string(st.State)))
	if d := replicaDetail(st.Deployments); d != "" {
		p.Detail(terminalSafe(d))
	}
}

// replicaDetail is "replicas running: LLM 1/2, Router 2/2".
func replicaDetail(ds []backend.DeploymentStatus) string {
	if len(ds) == 0 {
		return ""
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s %d/%d", d.Name, d.Replicas, d.TargetReplicas)
	}
	return "replicas running: " + strings.Join(parts, ", ")
}

// waitNotes is the slog.Handler of the Serve commands' backend: while a
// wait prints its progress, what the backend says at info level (the nodes
// the cluster's autoscaler is starting for the application) is a line of
// it, with the message's "raybackend: " dropped and its attributes but
// the application's after a colon; at other times it is dropped.
type waitNotes struct {
	mu sync.Mutex
	p  *progress.Printer
}

// printTo prints the notes on p until the returned func is called.
func (n *waitNotes) printTo(p *progress.Printer) (stop func()) {
	n.mu.Lock()
	n.p = p
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		n.p = nil
		n.mu.Unlock()
	}
}

func (n *waitNotes) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (n *waitNotes) WithAttrs([]slog.Attr) slog.Handler           { return n }
func (n *waitNotes) WithGroup(string) slog.Handler                { return n }

func (n *waitNotes) Handle(_ context.Context, r slog.Record) error {
	msg := strings.TrimPrefix(r.Message, "raybackend: ")
	var vals []string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "application" {
			vals = append(vals, a.Value.String())
		}
		return true
	})
	if len(vals) > 0 {
		msg += ": " + strings.Join(vals, ", ")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p != nil {
		n.p.Line(terminalSafe(msg))
	}
	return nil
}
