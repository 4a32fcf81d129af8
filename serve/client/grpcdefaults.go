package client

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The flow-control windows that [NewGRPC] advertises to the proxy: how
// many bytes of responses Serve may send on one call, and on the whole
// connection, before the client acknowledges them.
//
// Fixed windows turn off grpc-go's dynamic flow control, which otherwise
// answers every burst of response data with a bandwidth-delay-product
// PING: on a client that waits for Serve's proxy (a few hundred calls a
// second), that is one more frame to write, one more to read and two more
// goroutine wake-ups on nearly every call, about a quarter of the client's
// CPU per call (scripts/bench-serve-grpc-vs-python.sh). 4 MiB per stream
// lets a response of that size arrive in one round trip; a link whose
// bandwidth-delay product is larger can ask for probing back with
// [WithDynamicWindows] or set its own sizes with [WithDialOptions]
// (grpc.WithInitialWindowSize, grpc.WithInitialConnWindowSize).
const (
	DefaultStreamWindow int32 = 4 << 20
	DefaultConnWindow   int32 = 16 << 20
)

// WithDynamicWindows restores grpc-go's dynamic flow control (windows
// that grow from 64 KiB as BDP PINGs measure the link) in place of
// [NewGRPC]'s fixed [DefaultStreamWindow] and [DefaultConnWindow].
func WithDynamicWindows() GRPCOption {
	return func(s *grpcSettings) error {
		s.dynamicWindows = true
		return nil
	}
}

// transportDefaults are NewGRPC's dial options ahead of the user's: the
// transport credentials (plaintext unless WithTransportCredentials), with
// raw socket I/O unless WithRuntimeSocketIO, and the fixed windows unless
// WithDynamicWindows.
func (s *grpcSettings) transportDefaults() []grpc.DialOption {
	creds := s.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	if !s.runtimeIO {
		creds = rawIOCreds{creds}
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if !s.dynamicWindows {
		opts = append(opts, grpc.WithInitialWindowSize(DefaultStreamWindow),
			grpc.WithInitialConnWindowSize(DefaultConnWindow))
	}
	return opts
}
