// Package silentserver is a loopback TCP server that accepts connections
// and never answers: it reads what a client sends and discards it, holding
// every connection open until the test ends. Tests point clients at it to
// check that every request has a deadline.
package silentserver

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Server is a listening silent server.
type Server struct {
	// Addr is the host:port it listens on (127.0.0.1).
	Addr string
	// URL is "http://" + Addr.
	URL string

	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	n      int
	closed bool
	wg     sync.WaitGroup
}

// Start starts a silent server on 127.0.0.1 and closes it (and every
// connection it holds) in tb.Cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: l.Addr().String(), URL: "http://" + l.Addr().String(), l: l}
	s.wg.Go(s.accept)
	tb.Cleanup(s.Close)
	return s
}

func (s *Server) accept() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns = append(s.conns, c)
		s.n++
		s.mu.Unlock()
		s.wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
	}
}

// Accepted returns how many connections the server has accepted.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Close stops listening and closes every connection.
func (s *Server) Close() {
	s.l.Close()
	s.mu.Lock()
	s.closed = true
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
}
