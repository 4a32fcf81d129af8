package observe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/raytpu/raytpu/ray"
)

// maxExport bounds how much of one node's export is read.
const maxExport = 64 << 20

// Reader reads TPU metrics from a Ray cluster. It is safe for concurrent
// use. A Reader is made by NewReader: TPUMetrics of a nil *Reader, or of
// one not made by NewReader (a zero Reader), returns an error saying to use
// NewReader.
type Reader struct {
	client   *ray.Client
	hc       *http.Client
	parallel int
	logger   *slog.Logger
	nodeAddr func(ray.Node) string
}

// Option configures a Reader.
type Option func(*Reader) error

// WithHTTPClient sets the client used to GET every node's /metrics.
// Default: a client with a 10 s timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(r *Reader) error {
		if hc == nil {
			return errors.New("observe: WithHTTPClient(nil): want a client")
		}
		r.hc = hc
		return nil
	}
}

// WithParallelism bounds how many nodes are read at once. Default: 32.
func WithParallelism(n int) Option {
	return func(r *Reader) error {
		if n < 1 {
			return fmt.Errorf("observe: WithParallelism(%d): want >= 1", n)
		}
		r.parallel = n
		return nil
	}
}

// WithLogger logs every node read at debug level. Default: silent.
func WithLogger(l *slog.Logger) Option {
	return func(r *Reader) error {
		if l == nil {
			return errors.New("observe: WithLogger(nil): want a logger")
		}
		r.logger = l
		return nil
	}
}

// WithNodeAddr sets where a node's metrics export is read: addr returns
// the host:port to GET /metrics from, "" for the node's own
// (ray.Node.MetricsAddr). Use it where the node IPs the dashboard reports
// cannot be reached from here, as from outside a Kubernetes cluster
// (kubectl port-forward to each Ray pod's metrics port). Default: every
// node at its MetricsAddr.
func WithNodeAddr(addr func(ray.Node) string) Option {
	return func(r *Reader) error {
		if addr == nil {
			return errors.New("observe: WithNodeAddr(nil): want a function")
		}
		r.nodeAddr = addr
		return nil
	}
}

// NodeAddrs returns a WithNodeAddr function that looks a node up by its
// id, then by its IP, in addrs (values host:port); a node in neither keeps
// its MetricsAddr.
func NodeAddrs(addrs map[string]string) func(ray.Node) string {
	m := make(map[string]string, len(addrs))
	for k, v := range addrs {
		m[k] = v
	}
	return func(n ray.Node) string {
		if a, ok := m[n.ID]; ok && n.ID != "" {
			return a
		}
		return m[n.IP]
	}
}

// check reports a Reader its methods cannot use: nil, or not made by
// NewReader. op names the method called.
func (r *Reader) check(op string) error {
	if r == nil {
		return fmt.Errorf("observe: %s: nil *Reader: use observe.NewReader", op)
	}
	if r.client == nil || r.hc == nil || r.logger == nil || r.parallel <= 0 {
		return fmt.Errorf("observe: %s: *Reader not made by NewReader (a zero Reader): use observe.NewReader", op)
	}
	return nil
}

// addr is where node n's export is read.
func (r *Reader) addr(n ray.Node) string {
	if r.nodeAddr != nil {
		if a := r.nodeAddr(n); a != "" {
			return a
		}
	}
	return n.MetricsAddr()
}

// NewReader returns a reader of the cluster whose dashboard client is c,
// which must be made by ray.NewClient. Nil options are skipped.
func NewReader(c *ray.Client, opts ...Option) (*Reader, error) {
	if c == nil {
		return nil, errors.New("observe: NewReader(nil): want a dashboard client made by ray.NewClient")
	}
	if c.BaseURL() == "" {
		return nil, errors.New("observe: NewReader: the dashboard client was not made by ray.NewClient: use ray.NewClient")
	}
	r := &Reader{
		client:   c,
		hc:       &http.Client{Timeout: 10 * time.Second},
		parallel: 32,
		logger:   slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// TPUMetrics lists the cluster's alive nodes through the dashboard, reads
// the export of every TPU node (TPU resources or a slice label) and groups
// the chips by slice and host. A node that cannot be read is reported in
// its Host.Err; TPUMetrics fails only when the node list cannot be read or
// when no TPU node could be read.
func (r *Reader) TPUMetrics(ctx context.Context) (TPUMetrics, error) {
	if err := r.check("TPUMetrics"); err != nil {
		return TPUMetrics{}, err
	}
	nodes, err := r.client.Nodes(ctx)
	if err != nil {
		return TPUMetrics{}, fmt.Errorf("observe: list nodes: %w", err)
	}
	var tpuNodes []ray.Node
	for _, n := range nodes {
		if n.Alive() && isTPUNode(n) {
			tpuNodes = append(tpuNodes, n)
		}
	}
	exports := make([]NodeExport, len(tpuNodes))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.parallel)
	for i, n := range tpuNodes {
		g.Go(func() error {
			start := time.Now()
			exp, err := r.readNode(gctx, n)
			exports[i] = NodeExport{Node: n, Export: exp, Err: err}
			r.logger.LogAttrs(gctx, slog.LevelDebug, "observe: read node metrics",
				slog.String("node", n.ID), slog.String("addr", r.addr(n)),
				slog.Int("chips", len(exp.Chips)), slog.Duration("took", time.Since(start)), slog.Any("error", err))
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return TPUMetrics{}, err
	}
	failed := 0
	var first error
	for _, e := range exports {
		if e.Err != nil {
			failed++
			first = cmp.Or(first, e.Err)
		}
	}
	if failed > 0 && failed == len(exports) {
		return TPUMetrics{}, fmt.Errorf("observe: no TPU node's metrics could be read (%d nodes): %w", failed, first)
	}
	return Group(exports), nil
}

// readNode GETs and parses one node's export.
func (r *Reader) readNode(ctx context.Context, n ray.Node) (Export, error) {
	addr := r.addr(n)
	if addr == "" {
		return Export{}, fmt.Errorf("observe: node %s (%s): the dashboard reports no metrics export port", n.ID, n.IP)
	}
	u := "http://" + addr + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Export{}, fmt.Errorf("observe: node %s: %w", n.ID, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := r.hc.Do(req)
	if err != nil {
		return Export{}, fmt.Errorf("observe: node %s: GET %s: %w", n.ID, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Export{}, fmt.Errorf("observe: node %s: GET %s: HTTP %d", n.ID, u, resp.StatusCode)
	}
	exp, err := ParseExport(io.LimitReader(resp.Body, maxExport))
	if err != nil {
		return Export{}, fmt.Errorf("observe: node %s: %s: %w", n.ID, u, err)
	}
	return exp, nil
}
