package client

import (
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinels that [*HTTPError] and [*GRPCError] match with errors.Is.
var (
	// ErrNotFound: no application has the route (HTTP 404), or the
	// application named by the gRPC metadata does not exist or the
	// metadata is missing (NOT_FOUND).
	ErrNotFound = errors.New("serve client: not found")
	// ErrUnavailable: no replica can take the request now (HTTP 503 or
	// 429, gRPC UNAVAILABLE or RESOURCE_EXHAUSTED). Retrying later may
	// succeed.
	ErrUnavailable = errors.New("serve client: unavailable")
	// ErrTimeout: the request took longer than a deadline (HTTP 408 from
	// Serve's request_timeout_s, gRPC DEADLINE_EXCEEDED from Serve's or the
	// caller's deadline).
	ErrTimeout = errors.New("serve client: timed out")
	// ErrInternal: the deployment failed to handle the request (HTTP 500,
	// gRPC INTERNAL or UNKNOWN).
	ErrInternal = errors.New("serve client: internal error")
)

// HTTPError is a non-2xx answer of Serve's HTTP proxy.
type HTTPError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Method and URL are the request's (URL without credentials).
	Method, URL string
	// Body is the start of Ray's answer (at most the client's error body
	// limit), e.g. "Path '/x' not found. Ping http://.../-/routes for
	// available routes."
	Body string
	// RequestID is Serve's x-request-id of the request, when it sent one.
	RequestID string
}

func (e *HTTPError) Error() string {
	if e == nil {
		return "serve client: <nil HTTPError>"
	}
	msg := fmt.Sprintf("serve client: %s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	if e.RequestID != "" {
		msg += " (request_id " + e.RequestID + ")"
	}
	return msg
}

// Is maps the status code onto the package's sentinels.
func (e *HTTPError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnavailable:
		return e.StatusCode == http.StatusServiceUnavailable || e.StatusCode == http.StatusTooManyRequests
	case ErrTimeout:
		return e.StatusCode == http.StatusRequestTimeout
	case ErrInternal:
		return e.StatusCode == http.StatusInternalServerError
	}
	return false
}

// GRPCError is a failed call through Serve's gRPC proxy.
type GRPCError struct {
	// Method is the full RPC name, /package.Service/Method.
	Method string
	// Application is the routing metadata the call carried ("" for none).
	Application string
	// RequestID is Serve's request_id from the trailing metadata, when
	// the proxy sent one.
	RequestID string
	// Status is the call's gRPC status: its code and Ray's message.
	Status *status.Status
	// ctxErr is the caller's ctx error when the ctx ended the call.
	ctxErr error
}

func (e *GRPCError) Error() string {
	if e == nil {
		return "serve client: <nil GRPCError>"
	}
	msg := fmt.Sprintf("serve client: %s", e.Method)
	if e.Application != "" {
		msg += fmt.Sprintf(" (application %q)", e.Application)
	}
	msg += fmt.Sprintf(": %s: %s", e.Status.Code(), e.Status.Message())
	if e.RequestID != "" {
		msg += " (request_id " + e.RequestID + ")"
	}
	return msg
}

// GRPCStatus lets status.FromError and status.Code see the call's status.
func (e *GRPCError) GRPCStatus() *status.Status {
	if e == nil {
		return nil
	}
	return e.Status
}

// Unwrap returns the ctx's error (context.DeadlineExceeded or
// context.Canceled) when the caller's ctx ended the call, else nil.
func (e *GRPCError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.ctxErr
}

// Is maps the status code onto the package's sentinels.
func (e *GRPCError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch c := e.Status.Code(); target {
	case ErrNotFound:
		return c == codes.NotFound
	case ErrUnavailable:
		return c == codes.Unavailable || c == codes.ResourceExhausted
	case ErrTimeout:
		return c == codes.DeadlineExceeded
	case ErrInternal:
		return c == codes.Internal || c == codes.Unknown
	}
	return false
}
