package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/serve/client"
)

// These tests run against an httptest server speaking the OpenAI wire
// format as Ray Serve LLM's ingress does; the test against a real Serve
// LLM application comes with it. They start no Ray cluster.

// chunk is a chat completion chunk's event.
func chunk(id, content string) string {
	return fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":null}]}\n\n", id, content)
}

// streamServer answers POST /v1/chat/completions with the events the
// handler writes: write sends an event and flushes it.
func streamServer(t *testing.T, handle func(w io.Writer, flush func(), r *http.Request)) *client.OpenAI {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusBadRequest)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["stream"] != true {
			http.Error(w, fmt.Sprintf("want stream: true, got %v (%v)", body, err), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		handle(w, f.Flush, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.NewOpenAI(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var chatReq = client.ChatCompletionRequest{Model: "m", Messages: []client.ChatMessage{{Role: "user", Content: "hi"}}}

// Each chunk is handed over as soon as it arrives: the server sends the
// second chunk only after the client has received the first.
func TestChatCompletionStreamIsIncremental(t *testing.T) {
	t.Parallel()
	received := make(chan struct{})
	c := streamServer(t, func(w io.Writer, flush func(), r *http.Request) {
		io.WriteString(w, ": keep-alive comment\n\n")
		io.WriteString(w, chunk("c1", "Hel"))
		flush()
		select {
		case <-received:
		case <-time.After(10 * time.Second):
			return // the client never saw the first chunk: it fails below
		}
		io.WriteString(w, chunk("c1", "lo"))
		io.WriteString(w, "event: message\ndata: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\r\n\r\n")
		io.WriteString(w, "data: [DONE]\n\n")
		flush()
	})
	s, err := c.ChatCompletionStream(t.Context(), chatReq)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Next() {
		t.Fatalf("no first chunk: %v", s.Err())
	}
	if got := s.Current().Choices[0].Delta.Content; got != "Hel" {
		t.Fatalf("first chunk %q, want Hel", got)
	}
	close(received)
	var text strings.Builder
	text.WriteString("Hel")
	var last client.ChatCompletionChunk
	for s.Next() {
		last = s.Current()
		text.WriteString(last.Choices[0].Delta.Content)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "Hello" || last.Choices[0].FinishReason != "stop" || last.Usage == nil || last.Usage.TotalTokens != 3 {
		t.Errorf("text %q, last chunk %+v", text.String(), last)
	}
	if s.Next() {
		t.Error("Next after [DONE] = true")
	}
}

// Cancelling the ctx, or closing the stream, mid-stream ends Next at once
// and closes the connection, which ends the request on the server; after
// a cancel Err is the ctx's error.
func TestChatCompletionStreamEnds(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			serverDone := make(chan struct{})
			c := streamServer(t, func(w io.Writer, flush func(), r *http.Request) {
				defer close(serverDone)
				io.WriteString(w, chunk("c1", "a"))
				flush()
				<-r.Context().Done() // a streaming engine's handler waits here for its next token
			})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := c.ChatCompletionStream(ctx, chatReq)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.Next() {
				t.Fatalf("no first chunk: %v", s.Err())
			}
			if how == "close" {
				s.Close()
				s.Close() // twice is fine
			} else {
				go func() {
					time.Sleep(50 * time.Millisecond) // Next is blocked in a read by then
					cancel()
				}()
				start := time.Now()
				if s.Next() {
					t.Fatal("Next after cancel = true")
				}
				if !errors.Is(s.Err(), context.Canceled) {
					t.Errorf("Err = %v, want context.Canceled", s.Err())
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("Next took %v to return after cancel", d)
				}
			}
			select {
			case <-serverDone:
			case <-time.After(10 * time.Second):
				t.Fatal("the server's handler is still running: the request was not ended")
			}
		})
	}
}

// An error the server sends as an event mid-stream ends the stream with
// an OpenAIError carrying the error body; a stream cut short without
// [DONE] is an unexpected EOF.
func TestChatCompletionStreamErrors(t *testing.T) {
	t.Parallel()
	c := streamServer(t, func(w io.Writer, flush func(), r *http.Request) {
		io.WriteString(w, chunk("c1", "a"))
		io.WriteString(w, `data: {"error": {"message": "engine died", "type": "InternalServerError", "param": null, "code": 500}}`+"\n\n")
		flush()
	})
	s, err := c.ChatCompletionStream(t.Context(), chatReq)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for s.Next() {
	}
	var oe *client.OpenAIError
	if !errors.As(s.Err(), &oe) || oe.Message != "engine died" || oe.Code != "500" || oe.HTTP != nil {
		t.Fatalf("Err = %#v, want the OpenAIError of the event", s.Err())
	}
	if !errors.Is(s.Err(), client.ErrInternal) {
		t.Errorf("errors.Is(%v, ErrInternal) = false", s.Err())
	}

	cut := streamServer(t, func(w io.Writer, flush func(), r *http.Request) {
		io.WriteString(w, chunk("c1", "a"))
	})
	s2, err := cut.ChatCompletionStream(t.Context(), chatReq)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for s2.Next() {
	}
	if !errors.Is(s2.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("Err = %v, want io.ErrUnexpectedEOF", s2.Err())
	}
}
