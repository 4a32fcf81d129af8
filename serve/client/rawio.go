package client

import (
	"context"
	"net"

	"google.golang.org/grpc/credentials"
)

// rawIOCreds hands the inner credentials the connection with raw socket
// I/O (see rawIOConn), so that plaintext and TLS alike read and write the
// socket without the runtime's blocking-syscall path. The connection is
// still dialled by gRPC (proxies, TCP keepalive, unix: targets work as
// with grpc-go alone).
type rawIOCreds struct {
	credentials.TransportCredentials
}

func (c rawIOCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c.TransportCredentials.ClientHandshake(ctx, authority, wrapRawIO(conn))
}

func (c rawIOCreds) Clone() credentials.TransportCredentials {
	return rawIOCreds{c.TransportCredentials.Clone()}
}

// WithRuntimeSocketIO makes the connection read and write its socket
// through Go's net package, as grpc-go does by itself, in place of
// [NewGRPC]'s default on Linux: non-blocking reads and writes issued as
// raw system calls, which spare the Go runtime a monitor-thread wake-up
// and its thread switches on nearly every call of a client that waits
// between calls (about a fifth of its CPU per call, measured with
// scripts/bench-serve-grpc-vs-python.sh). Readiness, deadlines and Close
// go through the runtime's network poller either way.
func WithRuntimeSocketIO() GRPCOption {
	return func(s *grpcSettings) error {
		s.runtimeIO = true
		return nil
	}
}
