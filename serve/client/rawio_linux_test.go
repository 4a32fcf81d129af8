package client

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a real loopback TCP connection, the
// client's wrapped with raw socket I/O.
func tcpPair(t *testing.T) (client net.Conn, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	w := wrapRawIO(c)
	if _, ok := w.(*rawIOConn); !ok {
		t.Fatalf("wrapRawIO(%T) = %T, want *rawIOConn", c, w)
	}
	return w, s
}

func TestRawIOConn(t *testing.T) {
	t.Parallel()
	t.Run("bytes both ways, more than the socket buffers hold", func(t *testing.T) {
		t.Parallel()
		c, s := tcpPair(t)
		big := make([]byte, 32<<20)
		for i := range big {
			big[i] = byte(i * 7)
		}
		for _, dir := range []struct {
			name string
			w, r net.Conn
		}{{"raw write", c, s}, {"raw read", s, c}} {
			errc := make(chan error, 1)
			go func() {
				n, err := dir.w.Write(big)
				if err == nil && n != len(big) {
					err = io.ErrShortWrite
				}
				errc <- err
			}()
			got := make([]byte, len(big))
			if _, err := io.ReadFull(dir.r, got); err != nil {
				t.Fatalf("%s: read: %v", dir.name, err)
			}
			if err := <-errc; err != nil {
				t.Fatalf("%s: write: %v", dir.name, err)
			}
			if !bytes.Equal(got, big) {
				t.Fatalf("%s: the %d bytes read differ from those written", dir.name, len(big))
			}
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		t.Parallel()
		c, _ := tcpPair(t)
		if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read past the deadline: %v, want os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("peer closes: EOF", func(t *testing.T) {
		t.Parallel()
		c, s := tcpPair(t)
		s.Write([]byte("bye"))
		s.Close()
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "bye" {
			t.Fatalf("ReadAll = %q, %v; want \"bye\" then EOF", got, err)
		}
	})
	t.Run("Close wakes a blocked Read", func(t *testing.T) {
		t.Parallel()
		c, _ := tcpPair(t)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		c.Close()
		select {
		case err := <-errc:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Read after Close: %v, want net.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Read still blocked 5s after Close")
		}
	})
	t.Run("write to a reset connection", func(t *testing.T) {
		t.Parallel()
		c, s := tcpPair(t)
		s.(*net.TCPConn).SetLinger(0)
		s.Close()
		var err error
		for i := 0; i < 100 && err == nil; i++ {
			_, err = c.Write(make([]byte, 1<<16))
			time.Sleep(time.Millisecond)
		}
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "write" || op.Net != "tcp" {
			t.Fatalf("Write to a reset peer: %v, want a *net.OpError for write on tcp", err)
		}
	})
	t.Run("not a socket: unchanged", func(t *testing.T) {
		t.Parallel()
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		if w := wrapRawIO(a); w != a {
			t.Fatalf("wrapRawIO(net.Pipe) = %T, want the same conn", w)
		}
	})
}
