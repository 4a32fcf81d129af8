package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// TestServeProgressGolden renders a Serve wait (links, states, replicas
// running out of wanted as they come up) with a fixed clock, as plain
// timestamped lines and as the bytes a terminal receives.
func TestServeProgressGolden(t *testing.T) {
	t.Parallel()
	dep := func(router, llm int) []backend.DeploymentStatus {
		return []backend.DeploymentStatus{
			{Name: "LLM", Status: "UPDATING", Replicas: llm, TargetReplicas: 2},
			{Name: "Router", Status: "UPDATING", Replicas: router, TargetReplicas: 2},
		}
	}
	steps := []struct {
		after time.Duration
		st    backend.ServiceStatus
	}{
		{0, backend.ServiceStatus{Name: "chat", State: backend.ServiceDeploying, Deployments: dep(0, 0)}},
		{time.Second, backend.ServiceStatus{Name: "chat", State: backend.ServiceDeploying, Deployments: dep(0, 0)}},
		{1500 * time.Millisecond, backend.ServiceStatus{Name: "chat", State: backend.ServiceDeploying, Deployments: dep(1, 0)}},
		{time.Second, backend.ServiceStatus{Name: "chat", State: backend.ServiceDeploying, Deployments: dep(2, 1)}},
		{2 * time.Second, backend.ServiceStatus{Name: "chat", State: backend.ServiceRunning, Deployments: dep(2, 2)}},
	}
	for _, tty := range []bool{false, true} {
		name := map[bool]string{false: "serve-wait-plain.txt", true: "serve-wait-terminal.txt"}[tty]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
			var b bytes.Buffer
			p := progress.New(&b, progress.WithTerminal(tty), progress.WithClock(func() time.Time { return now }))
			l := newLinks("http://127.0.0.1:8265")
			p.Link("application", l.ServeApp("chat"))
			p.Link("metrics", l.Metrics())
			for _, s := range steps {
				now = now.Add(s.after)
				showServeStatus(p, &s.st)
			}
			p.Done(string(backend.ServiceRunning))
			golden.Assert(t, name, b.Bytes())
		})
	}
}

// The Serve commands' backend says which nodes the autoscaler is starting
// while a wait goes on: a line of the wait's progress, dropped outside one.
func TestWaitNotes(t *testing.T) {
	var out strings.Builder
	notes := &waitNotes{}
	log := slog.New(notes)
	log.Info("raybackend: the application waits for the nodes the autoscaler is starting", "application", "chat", "starting", "2 v4-16 nodes")
	stop := notes.printTo(newProgress(&out))
	log.Debug("raybackend: not shown")
	log.Info("raybackend: the application waits for the nodes the autoscaler is starting", "application", "chat", "starting", "1 v4-16 node")
	stop()
	log.Info("raybackend: after the wait")
	// Not on a terminal, a line is a timestamp and the message.
	_, got, _ := strings.Cut(out.String(), " ")
	if want := "the application waits for the nodes the autoscaler is starting: 1 v4-16 node\n"; got != want || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("printed %q, want one line: a timestamp and %q", out.String(), want)
	}
}
