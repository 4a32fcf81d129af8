package tpuplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Chip holds the values served for one chip.
type Chip struct {
	// TensorCoreUtilization and MemoryBandwidthUtilization are node-scoped
	// percentages (0-100).
	TensorCoreUtilization      float64
	MemoryBandwidthUtilization float64
	// DutyCycle is the runtime duty cycle in percent (0-100); it is served
	// both as duty_cycle and as duty_cycle_node.
	DutyCycle float64
	// MemoryUsed and MemoryTotal are the chip's HBM in bytes.
	MemoryUsed, MemoryTotal float64
}

// Server serves one host's device-plugin metrics over HTTP.
type Server struct {
	cfg     Config
	prefix  string
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}
	scrapes atomic.Int64
	// nodeSuffix is Config.NodeSuffix, changed by SetNodeSuffix.
	nodeSuffix atomic.Bool

	mu    sync.Mutex
	chips []Chip
}

// Start listens on addr (host:port; port 0 picks a free one) and serves
// GET /metrics for the host cfg describes until Close. Every chip starts
// at zero but for MemoryTotal.
func Start(addr string, cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tpuplugin: listen on %s: %w", addr, err)
	}
	s := &Server{cfg: cfg, prefix: SliceNumber(cfg.SliceName), ln: ln, done: make(chan struct{})}
	s.nodeSuffix.Store(cfg.NodeSuffix)
	s.chips = make([]Chip, cfg.Chips)
	for i := range s.chips {
		s.chips[i].MemoryTotal = cfg.MemoryTotal
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the host:port the server listens on: the value of
// TPU_DEVICE_PLUGIN_ADDR for Ray.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Config returns the server's configuration with its defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Set replaces the values of the chip at the host-local index.
func (s *Server) Set(index int, c Chip) error {
	if index < 0 || index >= s.cfg.Chips {
		return fmt.Errorf("tpuplugin: chip index %d out of range: the host has chips 0..%d", index, s.cfg.Chips-1)
	}
	s.mu.Lock()
	s.chips[index] = c
	s.mu.Unlock()
	return nil
}

// SetNodeSuffix switches the names of the node-scoped families while the
// server runs (see Config.NodeSuffix).
func (s *Server) SetNodeSuffix(on bool) { s.nodeSuffix.Store(on) }

// Chips returns the values currently served, by host-local index.
func (s *Server) Chips() []Chip {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.chips)
}

// Scrapes counts the GET /metrics answered so far.
func (s *Server) Scrapes() int64 { return s.scrapes.Load() }

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Handler is the server's HTTP handler: GET /metrics as a real plugin,
// instrumented by promhttp and with the Go runtime families beside the
// TPU ones.
func (s *Server) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.collector(), collectors.NewGoCollector())
	metrics := promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.scrapes.Add(1)
		metrics.ServeHTTP(w, r)
	}))
	return mux
}
