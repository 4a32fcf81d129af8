package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// HTTP calls applications through Serve's HTTP proxy. It is safe for
// concurrent use.
type HTTP struct {
	base    *url.URL
	hc      *http.Client
	header  http.Header
	maxBody int64
	log     *slog.Logger
}

// Defaults of the HTTP client's options.
const (
	// DefaultMaxResponseBytes bounds a decoded answer.
	DefaultMaxResponseBytes = 64 << 20
	// maxErrorBody bounds the part of an error answer kept in HTTPError.
	maxErrorBody = 4 << 10
)

// NewHTTP returns a client of the Serve HTTP proxy at proxyURL (for
// example http://127.0.0.1:8000; a path is kept as a prefix of every
// route, as behind Serve's root_path).
func NewHTTP(proxyURL string, opts ...HTTPOption) (*HTTP, error) {
	u, err := url.Parse(proxyURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("serve client: NewHTTP: proxyURL %q: want an absolute http:// or https:// URL such as http://127.0.0.1:8000", redact(proxyURL))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("serve client: NewHTTP: proxyURL %q: must have no query or fragment", redact(proxyURL))
	}
	c := &HTTP{base: u, hc: http.DefaultClient, header: http.Header{}, maxBody: DefaultMaxResponseBytes,
		log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("serve client: NewHTTP: nil option")
		}
		if err := o(c); err != nil {
			return nil, fmt.Errorf("serve client: NewHTTP: %w", err)
		}
	}
	return c, nil
}

// HTTPOption configures an [HTTP] client; it validates and copies its
// inputs.
type HTTPOption func(*HTTP) error

// WithHTTPClient sends requests through hc (its Transport, Timeout and
// Jar). Default: http.DefaultClient.
func WithHTTPClient(hc *http.Client) HTTPOption {
	return func(c *HTTP) error {
		if hc == nil {
			return errors.New("WithHTTPClient: client is nil")
		}
		c.hc = hc
		return nil
	}
}

// WithHeader adds a header to every request (repeat it for more values).
// Content-Type and Accept are the client's own.
func WithHeader(key, value string) HTTPOption {
	return func(c *HTTP) error {
		switch ck := http.CanonicalHeaderKey(key); {
		case key == "" || strings.ContainsAny(key, " \t\r\n:"):
			return fmt.Errorf("WithHeader: key %q: want a header name such as X-Tenant", key)
		case strings.ContainsAny(value, "\r\n"):
			return fmt.Errorf("WithHeader: value of %s holds a line break", key)
		case ck == "Content-Type" || ck == "Accept" || ck == "Content-Length":
			return fmt.Errorf("WithHeader: key %q is set by the client (valid: any other header)", key)
		}
		c.header.Add(key, value)
		return nil
	}
}

// WithMaxResponseBytes bounds the answer a call decodes; a larger answer
// fails. Default: DefaultMaxResponseBytes (64 MiB).
func WithMaxResponseBytes(n int64) HTTPOption {
	return func(c *HTTP) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxResponseBytes: %d: must be > 0", n)
		}
		c.maxBody = n
		return nil
	}
}

// WithLogger logs each call's outcome at debug level. Default: silent.
func WithLogger(l *slog.Logger) HTTPOption {
	return func(c *HTTP) error {
		if l == nil {
			return errors.New("WithLogger: logger is nil")
		}
		c.log = l
		return nil
	}
}

// Post sends in, encoded as JSON, to route and decodes the JSON answer
// into out. route is an application's route prefix ("/linear"), with an
// optional sub-path or query ("/linear/v2?n=3"). in nil sends no body; out
// nil discards the answer.
func (c *HTTP) Post(ctx context.Context, route string, in, out any) error {
	return c.Do(ctx, http.MethodPost, route, in, out)
}

// Get fetches route and decodes the JSON answer into out (nil: discard).
func (c *HTTP) Get(ctx context.Context, route string, out any) error {
	return c.Do(ctx, http.MethodGet, route, nil, out)
}

// Do sends one request of any method; see Post. A non-2xx answer is an
// [*HTTPError]; a ctx that ends first is an error wrapping ctx.Err().
// Do never retries: a model call is not known to be idempotent.
func (c *HTTP) Do(ctx context.Context, method, route string, in, out any) error {
	if err := c.usable(ctx); err != nil {
		return err
	}
	resp, u, err := c.send(ctx, method, route, in, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return fmt.Errorf("serve client: %s %s: reading the answer: %w", method, u.Redacted(), err)
	}
	if int64(len(b)) > c.maxBody {
		return fmt.Errorf("serve client: %s %s: the answer exceeds %d bytes (WithMaxResponseBytes)", method, u.Redacted(), c.maxBody)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("serve client: %s %s: the answer is not the JSON wanted (%w): %.200q", method, u.Redacted(), err, b)
	}
	return nil
}

// Errors of a call on a client that was never built or given no context.
var (
	errNilHTTP    = errors.New("serve client: nil or zero HTTP client: build one with NewHTTP")
	errNilOpenAI  = errors.New("serve client: nil or zero OpenAI client: build one with NewOpenAI")
	errNilContext = errors.New("serve client: nil context: pass context.Background() or a context with a deadline")
)

// usable says why c cannot send a request with ctx, or nil.
func (c *HTTP) usable(ctx context.Context) error {
	switch {
	case c == nil || c.base == nil || c.hc == nil:
		return errNilHTTP
	case ctx == nil:
		return errNilContext
	}
	return nil
}

// send sends one request with in as its JSON body (nil: none) and
// returns a 2xx answer, whose body the caller closes, with the request's
// URL. A non-2xx answer is an [*HTTPError] (its body read, within a
// limit, and closed); a ctx that ends first is an error wrapping
// ctx.Err().
func (c *HTTP) send(ctx context.Context, method, route string, in any, accept string) (*http.Response, *url.URL, error) {
	u, err := c.url(route)
	if err != nil {
		return nil, nil, err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, nil, fmt.Errorf("serve client: %s %s: encoding the request as JSON: %w", method, u.Redacted(), err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, nil, fmt.Errorf("serve client: %s %s: %w", method, u.Redacted(), err)
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		c.log.DebugContext(ctx, "serve client: request failed", "method", method, "url", u.Redacted(), "err", err)
		return nil, nil, fmt.Errorf("serve client: %s %s: %w", method, u.Redacted(), stripURLError(err))
	}
	c.log.DebugContext(ctx, "serve client: answer", "method", method, "url", u.Redacted(), "status", resp.StatusCode)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
		return nil, nil, &HTTPError{StatusCode: resp.StatusCode, Method: method, URL: u.Redacted(),
			Body: strings.TrimSpace(validUTF8(b)), RequestID: resp.Header.Get("X-Request-Id")}
	}
	return resp, u, nil
}

// url joins route to the proxy's URL.
func (c *HTTP) url(route string) (*url.URL, error) {
	if !strings.HasPrefix(route, "/") {
		return nil, fmt.Errorf("serve client: route %q: must start with \"/\" (an application's route prefix, e.g. \"/linear\")", route)
	}
	r, err := url.Parse(route)
	if err != nil || r.Host != "" || r.Scheme != "" || r.Fragment != "" {
		return nil, fmt.Errorf("serve client: route %q: want a path with an optional query, e.g. \"/linear?n=3\"", route)
	}
	u := *c.base
	u.Path = strings.TrimSuffix(c.base.Path, "/") + r.Path
	u.RawPath = ""
	u.RawQuery = r.RawQuery
	return &u, nil
}

// stripURLError drops *url.Error's copy of the URL (it may hold
// credentials and the message names the URL already).
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "<unparsable URL>"
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
