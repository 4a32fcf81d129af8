package ray

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// An Option configures a Client. Options validate their input and copy
// anything mutable.
type Option interface {
	apply(*Client) error
}

type optionFunc func(*Client) error

func (f optionFunc) apply(c *Client) error { return f(c) }

// WithHTTPClient sets the HTTP client. Default: a client with no overall
// timeout (use contexts) over a clone of http.DefaultTransport. The client
// is copied; its Transport is shared.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *Client) error {
		if hc == nil {
			return errors.New("ray: WithHTTPClient(nil)")
		}
		cp := *hc
		c.hc = &cp
		return nil
	})
}

// WithHeader adds a header to every request, e.g. an Authorization token.
// Header values are never logged.
func WithHeader(key, value string) Option {
	return optionFunc(func(c *Client) error {
		if key == "" || strings.ContainsAny(key, " \t\r\n:") {
			return fmt.Errorf("ray: WithHeader: invalid header name %q", key)
		}
		if strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("ray: WithHeader(%q): value contains a line break", key)
		}
		c.header.Add(textproto.CanonicalMIMEHeaderKey(key), value)
		return nil
	})
}

// WithTLSConfig sets the TLS configuration (a clone is kept). It applies to
// the client's transport when that is an *http.Transport.
func WithTLSConfig(cfg *tls.Config) Option {
	return optionFunc(func(c *Client) error {
		if cfg == nil {
			return errors.New("ray: WithTLSConfig(nil)")
		}
		c.tlsConf = cfg.Clone()
		return nil
	})
}

// WithLogger sets the logger for requests and retries. Default: silent.
// Logged URLs have their credentials removed; header values are never
// logged.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *Client) error {
		if l == nil {
			return errors.New("ray: WithLogger(nil)")
		}
		c.logger = l
		return nil
	})
}

// WithRequestTimeout sets how long one request may wait for the dashboard
// (default DefaultRequestTimeout, 30s; zero keeps it): the request fails
// when its answer has not come in whole that long after the request was
// sent, or when a streamed request body (a package upload) has not moved
// for that long. A request that timed out is not retried (against a
// dashboard that accepts connections and never answers, a read costs the
// timeout once, not once per attempt); SubmitJob then reads the job back
// once, as after any submission whose fate is unknown. The error matches
// ErrUnreachable. A context deadline that comes first ends the request
// first; RetryPolicy.AttemptTimeout, when shorter, bounds each attempt
// instead and is retried. TailJobLogs' stream is not bounded, only its
// opening handshake. A Serve deploy or shutdown (PUT or DELETE
// /api/serve/applications/: the dashboard starts or stops Serve's
// controller inside the request, which takes minutes on a loaded
// machine) waits ten times the timeout for its answer.
func WithRequestTimeout(d time.Duration) Option {
	return optionFunc(func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("ray: WithRequestTimeout(%v): negative; pass 0 for the default %v", d, DefaultRequestTimeout)
		}
		if d > 0 {
			c.timeout = d
		}
		return nil
	})
}
