package ray

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors. An *APIError (or a transport failure) matches them with
// errors.Is.
var (
	// ErrNotFound: the job or package does not exist (HTTP 404).
	ErrNotFound = errors.New("ray: not found")
	// ErrAlreadyExists: a job with this submission_id exists. Ray 2.60
	// answers HTTP 500 with "Job with submission_id ... already exists".
	ErrAlreadyExists = errors.New("ray: already exists")
	// ErrConflict: the job is in the wrong state for the request, such as
	// deleting a job that has not reached a terminal state.
	ErrConflict = errors.New("ray: conflicts with the job's state")
	// ErrInvalid: the server rejected the request as malformed (HTTP 400
	// or 422).
	ErrInvalid = errors.New("ray: invalid request")
	// ErrUnavailable: the dashboard could not be reached or answered with a
	// server error, after retries.
	ErrUnavailable = errors.New("ray: dashboard unavailable")
	// ErrUnreachable: no answer at all from the dashboard (connection
	// refused or reset, unknown host, timeout, TLS), after retries: the
	// address is wrong or the cluster is down. Every error that matches it
	// also matches ErrUnavailable; a dashboard that answers with a server
	// error matches ErrUnavailable only.
	ErrUnreachable = errors.New("ray: dashboard unreachable")
	// ErrUnauthenticated: the dashboard refused the request's token (HTTP
	// 401: none was sent; HTTP 403: it was wrong). The error's message says
	// how to supply one (see EnvAuthToken).
	ErrUnauthenticated = errors.New("ray: not authenticated")
	// ErrAnswerTooLarge: a successful answer was larger than the client
	// reads (256 MiB); the error names the path. Nothing past the limit
	// is read.
	ErrAnswerTooLarge = errors.New("ray: answer too large")
	// ErrDashboardNotServing: the address kept answering HTTP 405 to a
	// route Ray 2.60's dashboard serves for longer than
	// RetryPolicy.StartupWait: no Ray dashboard (or one still starting)
	// answers there. It also matches ErrUnavailable.
	ErrDashboardNotServing = errors.New("ray: dashboard not serving the route")
)

// APIError is an error answer from the Ray dashboard. A nil *APIError's
// Error is "<nil>" and it matches no sentinel.
type APIError struct {
	Status  int    // HTTP status code
	Method  string // HTTP method
	Path    string // URL path, without query or credentials
	Message string // the server's message, condensed (last line of a Python traceback)
	Body    string // the answer's body, at most 64 KiB

	hint string // what to do about it (for 401 and 403)
}

func (e *APIError) Error() string {
	if e == nil {
		return "<nil>"
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return fmt.Sprintf("ray: %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, msg)
}

// Is maps the error onto the package's sentinels.
func (e *APIError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrNotFound:
		return e.kind() == ErrNotFound
	case ErrAlreadyExists:
		return e.kind() == ErrAlreadyExists
	case ErrConflict:
		return e.kind() == ErrConflict
	case ErrInvalid:
		return e.kind() == ErrInvalid
	case ErrUnavailable:
		return e.kind() == ErrUnavailable
	case ErrUnauthenticated:
		return e.kind() == ErrUnauthenticated
	}
	return false
}

func (e *APIError) kind() error {
	if e == nil {
		return nil
	}
	body := e.Body
	switch {
	case e.Status == http.StatusNotFound:
		return ErrNotFound
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return ErrUnauthenticated
	case e.Status == http.StatusConflict || strings.Contains(body, "already exists"):
		return ErrAlreadyExists
	case strings.Contains(body, "non-terminal state"):
		return ErrConflict
	case e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity:
		return ErrInvalid
	case e.Status == http.StatusTooManyRequests || e.Status >= 500:
		return ErrUnavailable
	}
	return nil
}

// retryable reports whether a retry of the same request may succeed.
func (e *APIError) retryable() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		// Ray answers 500 both for its own transient trouble ("No available
		// agent to submit job, please try again later.") and for errors a
		// retry cannot fix (a traceback). Retry only the former, and an
		// actor that died under the request: the Serve controller that a
		// PUT reaches while it shuts down after the last application was
		// deleted ("ray.exceptions.ActorDiedError"); the next attempt
		// starts a fresh one.
		return strings.Contains(e.Body, "try again later") || strings.Contains(e.Body, "ActorDiedError")
	}
	return false
}

// notServing returns err's HTTP 405 answer, or nil.
func notServing(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusMethodNotAllowed {
		return ae
	}
	return nil
}

// prometheusMarker is what the Prometheus client's exporter answers to a
// method other than GET ("# HTTP 405 Method Not Allowed: POST; use
// OPTIONS or GET"); Ray serves its metrics with it.
const prometheusMarker = "use OPTIONS or GET"

// notServingError is a 405 that outlasted RetryPolicy.StartupWait.
type notServingError struct {
	dashboard string
	waited    time.Duration
	err       *APIError
}

func (e *notServingError) Error() string {
	msg := fmt.Sprintf("ray: %s %s: the Ray dashboard at %s has not served this route for %v (HTTP 405: %s)",
		e.err.Method, e.err.Path, e.dashboard, e.waited.Round(time.Second), e.err.Message)
	if strings.Contains(e.err.Body, prometheusMarker) {
		return msg + "; that answer is a Prometheus metrics exporter's, not a dashboard's: the address names a metrics port, not the Ray dashboard's port"
	}
	return msg + "; is the address that of a Ray 2.60 dashboard, and has its head finished starting?"
}

func (e *notServingError) Unwrap() []error {
	return []error{ErrDashboardNotServing, ErrUnavailable, e.err}
}

// condense turns a Ray error body (often a Python traceback) into a
// one-line message.
func condense(body string) string {
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "Traceback") {
		lines := strings.Split(body, "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			l := strings.TrimSpace(lines[i])
			if l == "" || l == "." {
				continue
			}
			if strings.HasPrefix(l, "File ") || strings.HasPrefix(l, "^") {
				break
			}
			// An exception line: "ValueError: ..." (possibly wrapped in a
			// RuntimeError that quotes the agent's traceback).
			if j := strings.Index(l, "Error: "); j > 0 && !strings.Contains(l[:j], " ") {
				return l
			}
		}
	}
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		first := strings.TrimSpace(body[:i])
		if len(first) > 0 {
			body = first + " ..."
		}
	}
	if len(body) > 512 {
		body = body[:512] + "..."
	}
	return body
}

// transportError wraps a failure to get any answer (connection refused or
// reset, timeout, TLS), with the URL's credentials removed.
type transportError struct {
	Method string
	URL    string // redacted
	Err    error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("ray: %s %s: %v", e.Method, e.URL, e.Err)
}

func (e *transportError) Unwrap() []error { return []error{ErrUnreachable, ErrUnavailable, e.Err} }

// timedOut reports whether the request timeout (not an attempt timeout
// of the retry policy) ended the request: such a request is not retried.
func (e *transportError) timedOut() bool {
	var te *timeoutError
	return errors.As(e.Err, &te)
}

// requestTimedOut reports whether err is a request that used up the
// client's request timeout.
func requestTimedOut(err error) bool {
	var te *transportError
	return errors.As(err, &te) && te.timedOut()
}

// timeoutError is a request that got no whole answer within the client's
// request timeout.
type timeoutError struct{ limit time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within %v (the client's request timeout; see WithRequestTimeout)", e.limit)
}

// Timeout lets net.Error-style checks see a timeout.
func (e *timeoutError) Timeout() bool { return true }

// Redact returns u without credentials: no userinfo, and the values of query
// parameters that look like secrets (token, key, secret, password, auth,
// signature, credential, session) replaced by "REDACTED".
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for k := range q {
			if secretParam(k) {
				for i := range q[k] {
					q[k][i] = "REDACTED"
				}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.String()
}

func secretParam(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "session"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// scrubURLError rewrites err's message so that it holds no credentials: the
// standard library puts the full request URL in a *url.Error.
func scrubURLError(method string, u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &transportError{Method: method, URL: Redact(u), Err: err}
}
