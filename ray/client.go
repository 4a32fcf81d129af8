// Package ray is a client of the Ray dashboard's REST API: the Jobs API
// (submit, get, list, logs, log tail, stop, delete, wait), runtime_env
// packages (working_dir and py_modules uploads), and the content hash Ray
// names packages by.
//
// The client retries only what is safe: reads, stop, delete and package
// GET/PUT (named by content). A submission carries a submission_id fixed
// before the first attempt; a retried submission the server rejects as a
// duplicate is confirmed by reading the job back, never by submitting under
// a new id.
//
// # Ray 2.60 as checked against the installed dashboard
//
//   - GET /api/version reports API version "4".
//   - With token authentication on, requests without a token are answered
//     401 and with a wrong one 403; both match ErrUnauthenticated.
//   - A second job with an existing submission_id is answered HTTP 500 (not
//     400 or 409) with a traceback ending in "ValueError: Job with
//     submission_id <id> already exists."; it matches ErrAlreadyExists.
//   - Deleting a PENDING or RUNNING job is answered HTTP 500 ("... is in a
//     non-terminal state"); it matches ErrConflict. Unknown jobs are 404
//     for get, logs, log tail, stop and delete. Stopping a finished job
//     answers {"stopped": false}.
//   - GET /api/jobs/ lists driver-only jobs (type "DRIVER") too.
//   - Packages: GET /api/packages/gcs/<name> answers 200 or 404 (and pins the
//     package for a while); PUT takes the raw zip. The dashboard refuses
//     request bodies of 100 MiB or more (HTTP 413), below the GCS limit of
//     512 MiB, and Ray's Python client stores files uncompressed, so it
//     cannot upload a working_dir of 100 MiB or more. PackageDir deflates by
//     default.
//   - The package name is "_ray_pkg_" + 16 hex digits: the XOR of the first
//     8 bytes of SHA-1(relative path [+ content]) over the directory itself
//     (as ".") and every file and directory kept, seeded with eight ASCII
//     "0"s. Ray's clients add the excludes .git, .venv, venv and __pycache__,
//     and honour .gitignore and .rayignore in every directory.
//   - GET /api/cluster_status answers the autoscaler's last report with
//     every key camel-cased, node type names among them ("tpu_v4-2x2x2"
//     becomes "tpuV4-2X2X2" as a key of activeNodes and pendingLaunches,
//     but not as a value of nodeTypeMapping); ClusterStatus maps them back.
//     A cluster started with ray start runs a monitor without an
//     autoscaler and reports no autoscalerReport.
//   - Every route of the dashboard is registered before its HTTP port is
//     bound: the Jobs API (JobHead: /api/jobs/, /api/version,
//     /api/packages/) runs in a subprocess of the dashboard with its own
//     aiohttp server on a unix socket, proxied by the dashboard's server,
//     and DashboardHead.run waits for every such module to be ready before
//     it binds the port. A dashboard that answers at all routes POST
//     /api/jobs/ to JobHead, which refuses a body without an entrypoint
//     with HTTP 400 (a probe that creates no job; internal/raycluster
//     waits for it before a cluster is ready). A JobHead restarting after
//     a failed health check answers 500 meanwhile, not 405.
//   - "# HTTP 405 Method Not Allowed: POST; use OPTIONS or GET" is the
//     Prometheus client's exporter, which Ray runs for the dashboard's
//     metrics (port 44227), the autoscaler's (44217) and every node's
//     --metrics-export-port: it answers 200 with metrics text to a GET of
//     any path and 405 to anything else. Such an answer means the address
//     is a metrics port, not the dashboard's (or no dashboard is up there
//     yet); a GET answered 200 proves nothing. The client waits a 405 out
//     for RetryPolicy.StartupWait, then names the dashboard's address.
//
// Every request is bounded by the request timeout (WithRequestTimeout,
// default DefaultRequestTimeout) and every answer by a size limit (256 MiB;
// ErrAnswerTooLarge).
//
// What a package holds, and what is refused (a symbolic link out of the
// directory, a link loop, a FIFO, socket or device file), is package
// runtimeenv/packaging's, which the KubeRay backend uses too: both ship
// the same files.
package ray

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// maxAnswerSize bounds a successful answer (job logs can be long). A larger
// answer is not buffered: the call fails with an error matching
// ErrAnswerTooLarge that names the path and the limit.
const maxAnswerSize = 256 << 20

// DefaultRequestTimeout is how long one request waits for the dashboard
// when no WithRequestTimeout option is given.
const DefaultRequestTimeout = 30 * time.Second

// Client talks to the Ray dashboard's REST API: Jobs, runtime_env packages
// and job log tails. It is safe for concurrent use.
//
// A Client is made by NewClient. Every method of a nil *Client, or of one
// not made by NewClient (a zero Client, new(Client)), returns an error
// saying to use NewClient ("ray: ListJobs: nil *Client: use ray.NewClient")
// without sending anything; TailJobLogs yields that error once, and
// BaseURL answers "".
type Client struct {
	base    *url.URL // scheme, host and path prefix, no trailing slash
	hc      *http.Client
	header  http.Header
	logger  *slog.Logger
	retry   RetryPolicy
	sleep   func(context.Context, time.Duration) error
	newID   func() string
	tlsConf *tls.Config
	// token is the bearer token sent (never logged nor in an error), and
	// tokenSource where it came from, for error messages.
	token, tokenSource string
	// uploads joins concurrent UploadDir calls for the same package.
	uploads singleflight.Group
	// timeout bounds each request (WithRequestTimeout); maxAnswer bounds
	// a successful answer's size.
	timeout   time.Duration
	maxAnswer int64
}

// NewClient returns a client for the dashboard at baseURL, e.g.
// "http://127.0.0.1:8265". Userinfo in baseURL becomes basic auth. Unless
// WithToken or an Authorization header is given, the client finds a Ray
// token the way Ray's clients do (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH,
// ~/.ray/auth_token; see EnvAuthToken) and sends it on every request;
// a token path that is set but unreadable is an error.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("ray: NewClient: bad base URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("ray: NewClient: base URL %q: scheme must be http or https", Redact(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("ray: NewClient: base URL %q has no host", Redact(u))
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base:   u,
		header: http.Header{},
		logger: slog.New(slog.DiscardHandler),
		retry:  DefaultRetryPolicy(),
		sleep:  sleepCtx,
		newID:  NewSubmissionID,

		timeout:   DefaultRequestTimeout,
		maxAnswer: maxAnswerSize,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if c.tlsConf != nil {
		t, ok := c.hc.Transport.(*http.Transport)
		if c.hc.Transport == nil {
			t, ok = http.DefaultTransport.(*http.Transport).Clone(), true
		} else if ok {
			t = t.Clone()
		}
		if !ok {
			return nil, errors.New("ray: WithTLSConfig needs the HTTP client's Transport to be an *http.Transport")
		}
		t.TLSClientConfig = c.tlsConf
		c.hc.Transport = t
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		if c.header.Get("Authorization") == "" {
			req := &http.Request{Header: http.Header{}}
			req.SetBasicAuth(u.User.Username(), pw)
			c.header.Set("Authorization", req.Header.Get("Authorization"))
		}
		u.User = nil
	}
	if err := c.setupAuth(); err != nil {
		return nil, err
	}
	return c, nil
}

// apiError describes an error answer.
func (c *Client) apiError(status int, method, path string, body []byte) *APIError {
	e := &APIError{Status: status, Method: method, Path: path, Message: condense(string(body)), Body: string(body)}
	if e.kind() == ErrUnauthenticated {
		e.hint = c.authHint(status)
	}
	return e
}

// check reports a Client its methods cannot use: nil, or not made by
// NewClient. op names the method called.
func (c *Client) check(op string) error {
	if c == nil {
		return fmt.Errorf("ray: %s: nil *Client: use ray.NewClient", op)
	}
	if c.base == nil || c.hc == nil || c.retry.MaxAttempts == 0 {
		return fmt.Errorf("ray: %s: *Client not made by NewClient (a zero Client): use ray.NewClient", op)
	}
	return nil
}

// BaseURL returns the dashboard URL without credentials; "" for a nil
// Client or one not made by NewClient.
func (c *Client) BaseURL() string {
	if c.check("BaseURL") != nil {
		return ""
	}
	return Redact(c.base)
}

// request describes one logical call.
type request struct {
	method string
	path   string // under the base URL, starting with "/"
	query  string // the encoded query string, if any
	body   []byte
	stream io.Reader // a body read once, sent chunked (instead of body)
	ctype  string
	// retry: the request is safe to repeat.
	retry bool
	// ok lists the accepted statuses besides 200.
	ok []int
	// slow: the dashboard does long work inside the request (a Serve
	// deploy or shutdown starts or stops Serve's controller), so its
	// answer is waited for slowFactor times the request timeout.
	slow bool
}

// slowFactor is how many request timeouts a slow request waits.
const slowFactor = 10

// answer is a successful HTTP answer, read whole.
type answer struct {
	status int
	body   []byte
}

func (c *Client) url(path string) *url.URL {
	u := *c.base
	u.Path = c.base.Path + path
	return &u
}

// requestURL is r's URL: its path under the base URL, and its query.
func (c *Client) requestURL(r request) *url.URL {
	u := c.url(r.path)
	u.RawQuery = r.query
	return u
}

// do runs r, retrying when r.retry allows and the failure is transient. It
// returns the last failure when every attempt failed. attempts reports how
// many attempts were made.
func (c *Client) do(ctx context.Context, r request) (ans answer, attempts int, err error) {
	max := 1
	if r.retry {
		max = c.retry.MaxAttempts
	}
	attempts, err = c.withRetry(ctx, max, "request", func() error {
		var err error
		ans, err = c.once(ctx, r)
		return err
	}, slog.String("method", r.method), slog.String("url", Redact(c.requestURL(r))))
	return ans, attempts, err
}

// transient reports whether err may go away on a retry.
func transient(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.retryable()
	}
	var te *transportError
	return errors.As(err, &te) && !te.timedOut()
}

func (c *Client) once(ctx context.Context, r request) (answer, error) {
	// A watchdog bounds the attempt: it fires when the request body has
	// not moved, or the answer has not come in whole, for limit.
	limit, cause := c.timeout, errRequestTimeout
	if r.slow {
		limit *= slowFactor
	}
	if a := c.retry.AttemptTimeout; a > 0 && a < limit {
		limit, cause = a, errAttemptTimeout
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := time.AfterFunc(limit, func() { cancel(cause) })
	defer dog.Stop()
	u := c.requestURL(r)
	var body io.Reader
	switch {
	case r.stream != nil:
		body = &progressReader{r: r.stream, dog: dog, limit: limit}
	case r.body != nil:
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(actx, r.method, u.String(), body)
	if err != nil {
		return answer{}, fmt.Errorf("ray: %s %s: %w", r.method, r.path, err)
	}
	if r.body != nil {
		// Keep the length (set from the bytes.Reader) and watch the
		// body's progress, as for a stream: a large PUT is bounded by
		// how long the dashboard stops taking it, not by its size.
		req.Body = io.NopCloser(&progressReader{r: bytes.NewReader(r.body), dog: dog, limit: limit})
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	// timedOut is the failure of an attempt the watchdog ended.
	timedOut := func() error {
		if context.Cause(actx) == errAttemptTimeout {
			return fmt.Errorf("attempt timed out after %v", limit)
		}
		return &timeoutError{limit: limit}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("ray: %s %s: %w", r.method, Redact(u), ctx.Err())
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, "ray: request failed",
			slog.String("method", r.method), slog.String("url", Redact(u)), slog.Duration("took", time.Since(start)))
		if actx.Err() != nil {
			err = timedOut()
		}
		return answer{}, scrubURLError(r.method, u, err)
	}
	defer resp.Body.Close()
	accepted := resp.StatusCode == http.StatusOK
	for _, s := range r.ok {
		accepted = accepted || resp.StatusCode == s
	}
	max := c.maxAnswer
	if !accepted {
		max = maxErrorBody
	}
	// One byte past the limit tells a long answer from one of exactly
	// the limit; nothing more of it is read.
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, max+1))
	c.logger.LogAttrs(ctx, slog.LevelDebug, "ray: request",
		slog.String("method", r.method), slog.String("url", Redact(u)),
		slog.Int("status", resp.StatusCode), slog.Duration("took", time.Since(start)))
	if rerr != nil {
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("ray: %s %s: %w", r.method, Redact(u), ctx.Err())
		}
		if actx.Err() != nil {
			rerr = timedOut()
		}
		return answer{}, scrubURLError(r.method, u, fmt.Errorf("reading answer: %w", rerr))
	}
	if int64(len(data)) > max {
		if !accepted {
			data = data[:max] // an error's message: its start is enough
		} else {
			return answer{}, fmt.Errorf("ray: %s %s: %w: answer larger than %d bytes", r.method, u.Path, ErrAnswerTooLarge, max)
		}
	}
	if !accepted {
		return answer{status: resp.StatusCode}, c.apiError(resp.StatusCode, r.method, u.Path, data)
	}
	return answer{status: resp.StatusCode, body: data}, nil
}

// errAttemptTimeout and errRequestTimeout say which bound ended an
// attempt: RetryPolicy.AttemptTimeout (retried) or the request timeout
// (not retried).
var (
	errAttemptTimeout = errors.New("attempt timeout")
	errRequestTimeout = errors.New("request timeout")
)

// progressReader is a streamed request body: every read that moves it
// restarts the attempt's watchdog, so a long upload is bounded by its
// progress, not by its length.
type progressReader struct {
	r     io.Reader
	dog   *time.Timer
	limit time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 || err == io.EOF {
		p.dog.Reset(p.limit)
	}
	return n, err
}

// getJSON GETs path (retrying) and decodes the answer into v.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	ans, _, err := c.do(ctx, request{method: http.MethodGet, path: path, retry: true})
	if err != nil {
		return err
	}
	return decode(http.MethodGet, path, ans.body, v)
}

func decode(method, path string, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("ray: %s %s: decoding answer: %w", method, path, err)
	}
	return nil
}
