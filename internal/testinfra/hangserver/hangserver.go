// Package hangserver is a TCP server for tests that accepts connections on
// 127.0.0.1 and never answers: it reads and drops what it is sent and
// keeps every connection open until the test ends. A client talking to it
// ends only by its own deadline or its context.
package hangserver

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Start starts a server that never answers, listening on 127.0.0.1 only,
// and returns its host:port. It stops, closing every connection, when the
// test ends.
func Start(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hangserver: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// URL is Start's address as an http:// URL.
func URL(t testing.TB) string { return "http://" + Start(t) }
