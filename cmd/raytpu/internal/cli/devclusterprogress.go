package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/ray"
)

// nodePoll is how often a starting cluster's nodes are counted.
const nodePoll = time.Second

// startProgress shows a dev cluster coming up. It is the slog.Handler
// given to raycluster.Start: the head's start prints the cluster's links
// and starts counting the nodes the dashboard reports alive out of
// wanted; the workers' start and the wait for the Jobs API are states;
// READY comes once Ray's job module takes submissions; any other record
// (a restarted worker, a warning) is a line.
type startProgress struct {
	p      *progress.Printer
	ctx    context.Context
	wanted int

	mu       sync.Mutex
	polling  bool
	stopPoll context.CancelFunc
	wg       sync.WaitGroup
}

func newStartProgress(ctx context.Context, p *progress.Printer, wanted int) *startProgress {
	return &startProgress{p: p, ctx: ctx, wanted: wanted}
}

// stop ends the node count.
func (s *startProgress) stop() {
	s.mu.Lock()
	if s.stopPoll != nil {
		s.stopPoll()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *startProgress) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (s *startProgress) WithAttrs([]slog.Attr) slog.Handler           { return s }
func (s *startProgress) WithGroup(string) slog.Handler                { return s }

func (s *startProgress) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]string{}
	var text []string
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		text = append(text, a.Key+"="+a.Value.String())
		return true
	})
	switch r.Message {
	case "starting ray head":
		s.p.State("STARTING HEAD")
		if d := attrs["dashboard"]; d != "" {
			l := newLinks(d)
			s.p.Link("cluster", l.Cluster())
			s.p.Link("metrics", l.Metrics())
			s.countNodes(d)
		}
	case "starting ray worker":
		s.p.State("STARTING WORKERS")
	case "waiting for the Jobs API to take submissions":
		// Every node is up; READY waits until a submission would be
		// taken (issue 51).
		s.p.State("STARTING JOBS API")
	case "ray cluster ready":
		s.p.State("READY")
	default:
		msg := r.Message
		if len(text) > 0 {
			msg += " " + strings.Join(text, " ")
		}
		if r.Level >= slog.LevelWarn {
			msg = r.Level.String() + " " + msg
		}
		s.p.Line(msg)
	}
	return nil
}

// countNodes polls the dashboard at base for alive nodes until stop.
func (s *startProgress) countNodes(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polling {
		return
	}
	c, err := ray.NewClient(base)
	if err != nil {
		s.p.Line(fmt.Sprintf("cannot count nodes: %v", err))
		return
	}
	s.polling = true
	ctx, cancel := context.WithCancel(s.ctx)
	s.stopPoll = cancel
	s.wg.Go(func() {
		t := time.NewTicker(nodePoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_ = s.count(ctx, c) // an error: the dashboard is not up yet
		}
	})
}

// count shows how many nodes the dashboard of c reports alive.
func (s *startProgress) count(ctx context.Context, c *ray.Client) error {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return err
	}
	alive := 0
	for _, n := range nodes {
		if n.Alive() {
			alive++
		}
	}
	s.p.Count("nodes up", alive, s.wanted)
	return nil
}

// finalCount shows the nodes alive once the cluster is up.
func (s *startProgress) finalCount(base string) error {
	c, err := ray.NewClient(base)
	if err != nil {
		return err
	}
	return s.count(s.ctx, c)
}
