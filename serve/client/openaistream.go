package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// maxEvent bounds one server-sent event's data line.
const maxEvent = 4 << 20

// Stream reads a streamed completion's chunks as the server sends them
// (server-sent events, "data: {...}" until "data: [DONE]"):
//
//	s, err := c.ChatCompletionStream(ctx, req)
//	if err != nil { ... }
//	defer s.Close()
//	for s.Next() {
//		fmt.Print(s.Current().Choices[0].Delta.Content)
//	}
//	if err := s.Err(); err != nil { ... }
//
// Each chunk is handed over as soon as its event arrives. When ctx ends,
// or Close is called, the response body is closed at once, which ends
// the request on the server, and Next returns false; Err is then the
// ctx's error. An error event the server sends mid-stream is an
// [*OpenAIError]. A Stream is used by one goroutine; Close may be called
// from any.
type Stream[T any] struct {
	body   io.ReadCloser
	r      *bufio.Reader
	ctx    context.Context
	stop   func() bool
	close  sync.Once
	cur    T
	err    error
	done   bool
	method string
	url    string
}

// openStream posts in to route and returns the stream of its answer.
func openStream[T any](ctx context.Context, h *HTTP, route string, in any) (*Stream[T], error) {
	resp, u, err := h.send(ctx, http.MethodPost, route, in, "text/event-stream")
	if err != nil {
		return nil, apiError(err)
	}
	s := &Stream[T]{body: resp.Body, r: bufio.NewReader(resp.Body), ctx: ctx, method: http.MethodPost, url: u.Redacted()}
	// A ctx that ends closes the body at once, even while Next is blocked
	// in a read.
	s.stop = context.AfterFunc(ctx, func() { s.closeBody() })
	return s, nil
}

// Next waits for the next chunk and reports whether there is one.
func (s *Stream[T]) Next() bool {
	if s == nil || s.done {
		return false
	}
	if s.r == nil || s.body == nil {
		s.done, s.err = true, errZeroStream
		return false
	}
	for {
		data, err := s.event()
		if err != nil {
			s.finish(err)
			return false
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			s.finish(nil)
			return false
		}
		if e := eventError(data); e != nil {
			s.finish(e)
			return false
		}
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			s.finish(fmt.Errorf("serve client: %s %s: a chunk is not the JSON wanted (%w): %.200q", s.method, s.url, err, data))
			return false
		}
		s.cur = v
		return true
	}
}

// Current is the chunk Next read.
func (s *Stream[T]) Current() T {
	if s == nil {
		var zero T
		return zero
	}
	return s.cur
}

// errZeroStream is the error of a Stream not opened by a call.
var errZeroStream = errors.New("serve client: nil or zero Stream: open one with OpenAI.ChatCompletionStream or CompletionStream")

// Err is what ended the stream: nil after [DONE], else the ctx's error,
// an [*OpenAIError] the server sent, or a read error.
func (s *Stream[T]) Err() error {
	if s == nil {
		return errZeroStream
	}
	return s.err
}

// Close closes the response body, ending the request on the server if it
// is still streaming. It is safe to call more than once.
func (s *Stream[T]) Close() error {
	if s == nil {
		return nil
	}
	if s.stop != nil {
		s.stop()
	}
	s.closeBody()
	return nil
}

func (s *Stream[T]) closeBody() {
	s.close.Do(func() {
		if s.body != nil {
			s.body.Close()
		}
	})
}

// finish ends the stream with err, preferring the ctx's error to the read
// error closing the body caused.
func (s *Stream[T]) finish(err error) {
	s.done = true
	if ctxErr := s.ctx.Err(); ctxErr != nil && err != nil {
		err = fmt.Errorf("serve client: %s %s: %w", s.method, s.url, ctxErr)
	} else if err == io.EOF {
		err = fmt.Errorf("serve client: %s %s: the stream ended without [DONE]: %w", s.method, s.url, io.ErrUnexpectedEOF)
	}
	s.err = err
	s.Close()
}

// event reads the data of the next event: its data lines joined by "\n".
// Comments, and the event, id and retry fields, are skipped.
func (s *Stream[T]) event() ([]byte, error) {
	var data []byte
	seen := false
	for {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.longLine(line)
		}
		if err != nil && (len(line) == 0 || err != io.EOF) {
			if err == io.EOF && seen {
				return data, nil
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if seen {
				return data, nil
			}
			continue
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		if seen {
			data = append(data, '\n')
		}
		data, seen = append(data, v...), true
	}
}

// longLine reads the rest of a line longer than the reader's buffer, up
// to maxEvent bytes.
func (s *Stream[T]) longLine(first []byte) ([]byte, error) {
	line := append([]byte(nil), first...)
	for {
		more, err := s.r.ReadSlice('\n')
		line = append(line, more...)
		if len(line) > maxEvent {
			return nil, fmt.Errorf("serve client: %s %s: an event is longer than %d bytes", s.method, s.url, maxEvent)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
