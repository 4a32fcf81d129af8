package client_test

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// frameLog records the HTTP/2 frames a real gRPC server reads from its
// clients: how many PINGs they sent (not counting acks) and the stream
// window their SETTINGS announced.
type frameLog struct {
	mu           sync.Mutex
	pings        int
	streamWindow uint32
}

func (f *frameLog) counts() (pings int, streamWindow uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pings, f.streamWindow
}

// frameConn parses the bytes its server reads, frame by frame.
type frameConn struct {
	net.Conn
	log      *frameLog
	buf      []byte
	preamble bool
}

const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func (c *frameConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.buf = append(c.buf, p[:n]...)
	if !c.preamble && len(c.buf) >= len(clientPreface) {
		c.buf, c.preamble = c.buf[len(clientPreface):], true
	}
	for c.preamble && len(c.buf) >= 9 {
		size := int(c.buf[0])<<16 | int(c.buf[1])<<8 | int(c.buf[2])
		if len(c.buf) < 9+size {
			break
		}
		typ, flags, payload := c.buf[3], c.buf[4], c.buf[9:9+size]
		c.log.mu.Lock()
		switch {
		case typ == 0x6 && flags&0x1 == 0: // PING, not an ack
			c.log.pings++
		case typ == 0x4 && flags&0x1 == 0: // SETTINGS, not an ack
			for i := 0; i+6 <= len(payload); i += 6 {
				if binary.BigEndian.Uint16(payload[i:]) == 0x4 { // INITIAL_WINDOW_SIZE
					c.log.streamWindow = binary.BigEndian.Uint32(payload[i+2:])
				}
			}
		}
		c.log.mu.Unlock()
		c.buf = c.buf[9+size:]
	}
	return n, err
}

type frameListener struct {
	net.Listener
	log *frameLog
}

func (l frameListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &frameConn{Conn: c, log: l.log}, nil
}

// startFrameLogged serves echoMetadata and logs the frames it reads.
func startFrameLogged(t testing.TB) (string, *frameLog) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &frameLog{}
	s := grpc.NewServer()
	servev1.RegisterPredictorServer(s, echoMetadata{})
	go s.Serve(frameListener{Listener: l, log: log})
	t.Cleanup(s.Stop)
	return l.Addr().String(), log
}

// NewGRPC keeps grpc-go's flow control: it announces no stream window of
// its own (grpc-go's 64 KiB) and probes the link with
// bandwidth-delay-product PINGs; windows passed through WithDialOptions
// are fixed, as grpc-go makes them, and turn the probing off.
func TestNewGRPCWindows(t *testing.T) {
	t.Parallel()
	const fixed = 4 << 20
	for _, tc := range []struct {
		name       string
		opts       []client.GRPCOption
		wantWindow uint32
		wantPings  bool
	}{
		{"grpc-go's", nil, 0, true},
		{"dial options", []client.GRPCOption{client.WithDialOptions(
			grpc.WithInitialWindowSize(fixed), grpc.WithInitialConnWindowSize(4*fixed))}, fixed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, log := startFrameLogged(t)
			conn, err := client.NewGRPC(addr, append(tc.opts, client.WithApplication("a"))...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			stub := servev1.NewPredictorClient(conn)
			const calls = 50
			for range calls {
				resp, err := stub.Predict(t.Context(), &servev1.PredictRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Outputs["application"].GetDtype(); got != "a" {
					t.Fatalf("server saw application %q, want a", got)
				}
			}
			conn.Close()
			pings, window := log.counts()
			t.Logf("%d calls: %d PINGs from the client, stream window %d", calls, pings, window)
			if window != tc.wantWindow {
				t.Errorf("client's SETTINGS INITIAL_WINDOW_SIZE = %d, want %d (0: grpc-go's 64 KiB default, not announced)", window, tc.wantWindow)
			}
			if (pings > 0) != tc.wantPings {
				t.Errorf("client sent %d PINGs in %d calls, want some: %v", pings, calls, tc.wantPings)
			}
		})
	}
}
