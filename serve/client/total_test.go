package client

import (
	"context"
	"errors"
	"testing"
)

// TestNilAndZeroClientsReturnErrors: every exported method of the
// package's pointer types returns an error, or a harmless zero, on a nil
// or zero receiver and on a nil context, never a panic.
func TestNilAndZeroClientsReturnErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var nilCtx context.Context
	var nilHTTP *HTTP
	var nilOpenAI *OpenAI
	live, err := NewOpenAI("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	liveHTTP, err := NewHTTP("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"nil HTTP Do":               func() error { return nilHTTP.Do(ctx, "GET", "/", nil, nil) },
		"nil HTTP Get":              func() error { return nilHTTP.Get(ctx, "/", nil) },
		"nil HTTP Post":             func() error { return nilHTTP.Post(ctx, "/", nil, nil) },
		"zero HTTP Do":              func() error { return (&HTTP{}).Do(ctx, "GET", "/", nil, nil) },
		"HTTP nil ctx":              func() error { return liveHTTP.Get(nilCtx, "/", nil) },
		"nil OpenAI ChatCompletion": func() error { _, err := nilOpenAI.ChatCompletion(ctx, ChatCompletionRequest{}); return err },
		"nil OpenAI ChatCompletionStream": func() error {
			_, err := nilOpenAI.ChatCompletionStream(ctx, ChatCompletionRequest{})
			return err
		},
		"nil OpenAI Completion":       func() error { _, err := nilOpenAI.Completion(ctx, CompletionRequest{}); return err },
		"nil OpenAI CompletionStream": func() error { _, err := nilOpenAI.CompletionStream(ctx, CompletionRequest{}); return err },
		"nil OpenAI Models":           func() error { _, err := nilOpenAI.Models(ctx); return err },
		"zero OpenAI Models":          func() error { _, err := (&OpenAI{}).Models(ctx); return err },
		"OpenAI nil ctx":              func() error { _, err := live.Models(nilCtx); return err },
		"OpenAI stream nil ctx": func() error {
			_, err := live.ChatCompletionStream(nilCtx, ChatCompletionRequest{})
			return err
		},
		"nil Stream Err":  func() error { return (*Stream[Completion])(nil).Err() },
		"zero Stream Err": func() error { s := &Stream[Completion]{}; s.Next(); return s.Err() },
		"NewHTTP empty":   func() error { _, err := NewHTTP(""); return err },
		"NewOpenAI nil option": func() error {
			_, err := NewOpenAI("http://127.0.0.1:1", nil)
			return err
		},
		"NewGRPC empty":        func() error { _, err := NewGRPC(""); return err },
		"NewGRPC nil option":   func() error { _, err := NewGRPC("127.0.0.1:1", nil); return err },
		"WithHTTPClient nil":   func() error { _, err := NewHTTP("http://h", WithHTTPClient(nil)); return err },
		"WithLogger nil":       func() error { _, err := NewHTTP("http://h", WithLogger(nil)); return err },
		"WithMaxResponseBytes": func() error { _, err := NewHTTP("http://h", WithMaxResponseBytes(-1)); return err },
		"WithHeader empty":     func() error { _, err := NewHTTP("http://h", WithHeader("", "v")); return err },
		"WithApplication empty": func() error {
			_, err := NewGRPC("127.0.0.1:1", WithApplication(""))
			return err
		},
		"WithTransportCredentials nil": func() error {
			_, err := NewGRPC("127.0.0.1:1", WithTransportCredentials(nil))
			return err
		},
		"WithDialOptions nil": func() error { _, err := NewGRPC("127.0.0.1:1", WithDialOptions(nil)); return err },
	}
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}

	// Methods whose answer is not an error: a zero value, no panic.
	var s *Stream[Completion]
	if s.Next() || s.Close() != nil {
		t.Error("nil Stream: Next or Close")
	}
	_ = s.Current()
	if (&Stream[Completion]{}).Close() != nil {
		t.Error("zero Stream: Close")
	}
	var he *HTTPError
	var ge *GRPCError
	var oe *OpenAIError
	for _, e := range []error{he, ge, oe} {
		if e.Error() == "" || errors.Is(e, ErrNotFound) {
			t.Errorf("%T nil: Error %q", e, e.Error())
		}
	}
	if ge.GRPCStatus() != nil || ge.Unwrap() != nil || oe.Unwrap() != nil {
		t.Error("nil errors unwrap to something")
	}
	if (&GRPCError{}).Error() == "" {
		t.Error("zero GRPCError: empty message")
	}
}
