package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The invocation metadata keys Serve's gRPC proxy reads.
const (
	KeyApplication        = "application"
	KeyRequestID          = "request_id"
	KeyMultiplexedModelID = "multiplexed_model_id"
	KeySessionID          = "session_id"
)

// Metadata is Serve's routing metadata of a gRPC call. Empty fields are
// not sent.
type Metadata struct {
	// Application names the application whose ingress deployment takes
	// the call. Required when more than one application is deployed.
	Application string
	// RequestID is the request's id in Serve's logs (and in the trailing
	// metadata). Default: one Serve picks.
	RequestID string
	// MultiplexedModelID routes to a replica holding that model (Serve's
	// model multiplexing).
	MultiplexedModelID string
	// SessionID is passed to the replica as the request's session id.
	SessionID string
}

// pairs are m's keys and values in a fixed order, empty values included.
func (m Metadata) pairs() [4][2]string {
	return [...][2]string{{KeyApplication, m.Application}, {KeyRequestID, m.RequestID},
		{KeyMultiplexedModelID, m.MultiplexedModelID}, {KeySessionID, m.SessionID}}
}

// validate reports a value that cannot travel as a metadata value.
func (m Metadata) validate() error {
	for _, kv := range m.pairs() {
		for _, r := range kv[1] {
			if r < 0x20 || r > 0x7e {
				return fmt.Errorf("metadata %s %q: want printable ASCII (gRPC metadata values)", kv[0], kv[1])
			}
		}
	}
	return nil
}

// merge returns m with the non-empty fields of o.
func (m Metadata) merge(o Metadata) Metadata {
	if o.Application != "" {
		m.Application = o.Application
	}
	if o.RequestID != "" {
		m.RequestID = o.RequestID
	}
	if o.MultiplexedModelID != "" {
		m.MultiplexedModelID = o.MultiplexedModelID
	}
	if o.SessionID != "" {
		m.SessionID = o.SessionID
	}
	return m
}

// md is m's non-empty keys as gRPC metadata.
func (m Metadata) md() metadata.MD {
	md := metadata.MD{}
	for _, kv := range m.pairs() {
		if kv[1] != "" {
			md[kv[0]] = []string{kv[1]}
		}
	}
	return md
}

// outgoing returns ctx with m's keys set, replacing the same keys in
// ctx's outgoing metadata. pre, when not nil, is m.md() built once: a ctx
// without outgoing metadata carries it as it is (gRPC only reads it).
func (m Metadata) outgoing(ctx context.Context, pre metadata.MD) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx) // a copy
	if !ok {
		if pre == nil {
			pre = m.md()
		}
		if len(pre) == 0 {
			return ctx
		}
		return metadata.NewOutgoingContext(ctx, pre)
	}
	for _, kv := range m.pairs() {
		if kv[1] != "" {
			md.Set(kv[0], kv[1])
		}
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// metadataOption is a grpc.CallOption that the interceptors read; gRPC
// itself ignores it.
type metadataOption struct {
	grpc.EmptyCallOption
	md Metadata
}

// Application routes one call to the named application. It needs the
// connection's [UnaryInterceptor] or [StreamInterceptor] (as [NewGRPC]
// installs), and overrides their default.
func Application(name string) grpc.CallOption {
	return metadataOption{md: Metadata{Application: name}}
}

// RequestID sets one call's request_id (see [Application]).
func RequestID(id string) grpc.CallOption { return metadataOption{md: Metadata{RequestID: id}} }

// MultiplexedModelID sets one call's multiplexed_model_id (see
// [Application]).
func MultiplexedModelID(id string) grpc.CallOption {
	return metadataOption{md: Metadata{MultiplexedModelID: id}}
}

// SessionID sets one call's session_id (see [Application]).
func SessionID(id string) grpc.CallOption { return metadataOption{md: Metadata{SessionID: id}} }

// callDefaults are an interceptor's defaults, checked and turned into
// metadata once.
type callDefaults struct {
	md  Metadata
	pre metadata.MD
	err error
}

func newCallDefaults(m Metadata) callDefaults {
	return callDefaults{md: m, pre: m.md(), err: m.validate()}
}

// forCall merges the defaults with the call's metadata options; pre is
// nil when an option changed them.
func (d callDefaults) forCall(opts []grpc.CallOption) (m Metadata, pre metadata.MD, err error) {
	m, changed := d.md, false
	for _, o := range opts {
		if mo, ok := o.(metadataOption); ok {
			m, changed = m.merge(mo.md), true
		}
	}
	if !changed {
		return m, d.pre, d.err
	}
	return m, nil, m.validate()
}

// UnaryInterceptor sets Serve's routing metadata on every unary call:
// defaults, overridden by the call's [Application], [RequestID],
// [MultiplexedModelID] and [SessionID] options. A failed call becomes a
// [*GRPCError].
func UnaryInterceptor(defaults Metadata) grpc.UnaryClientInterceptor {
	d := newCallDefaults(defaults)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		m, pre, err := d.forCall(opts)
		if err != nil {
			return fmt.Errorf("serve client: %s: %w", method, err)
		}
		var trailer metadata.MD
		err = invoker(m.outgoing(ctx, pre), method, req, reply, cc, append(opts, grpc.Trailer(&trailer))...)
		if err != nil {
			return callError(ctx, method, m, trailer, err)
		}
		return nil
	}
}

// StreamInterceptor is [UnaryInterceptor] for streaming calls. An error
// opening the stream becomes a [*GRPCError]; errors of Send and Recv are
// gRPC's own.
func StreamInterceptor(defaults Metadata) grpc.StreamClientInterceptor {
	d := newCallDefaults(defaults)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		m, pre, err := d.forCall(opts)
		if err != nil {
			return nil, fmt.Errorf("serve client: %s: %w", method, err)
		}
		s, err := streamer(m.outgoing(ctx, pre), desc, cc, method, opts...)
		if err != nil {
			return nil, callError(ctx, method, m, nil, err)
		}
		return s, nil
	}
}

// callError wraps a failed call's status.
func callError(ctx context.Context, method string, m Metadata, trailer metadata.MD, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("serve client: %s: %w", method, err)
	}
	e := &GRPCError{Method: method, Application: m.Application, Status: st}
	if ids := trailer.Get(KeyRequestID); len(ids) > 0 {
		e.RequestID = ids[0]
	}
	e.ctxErr = ctxEnded(ctx, st.Code())
	return e
}

// ctxEnded is the caller's ctx error when the ctx ended the call. A
// DEADLINE_EXCEEDED that arrives once the ctx's deadline has passed is the
// caller's too, even before the ctx's timer has marked it done: the server
// ran out of the time the call's grpc-timeout gave it, which is the
// caller's deadline seen from the other side (on a busy machine the
// server's status can come in before the ctx's own timer fires).
func ctxEnded(ctx context.Context, code codes.Code) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && code == codes.DeadlineExceeded && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// GRPCOption configures [NewGRPC]; it validates and copies its inputs.
type GRPCOption func(*grpcSettings) error

type grpcSettings struct {
	md       Metadata
	dialOpts []grpc.DialOption
	creds    credentials.TransportCredentials
}

// WithApplication routes every call of the connection to the named
// application (a call's [Application] option overrides it).
func WithApplication(name string) GRPCOption {
	return func(s *grpcSettings) error {
		if name == "" {
			return errors.New("WithApplication: name is empty (the application's name in Serve, e.g. \"linear\")")
		}
		s.md.Application = name
		return nil
	}
}

// WithMetadata sets every routing key of the connection's calls at once.
func WithMetadata(m Metadata) GRPCOption {
	return func(s *grpcSettings) error {
		if err := m.validate(); err != nil {
			return fmt.Errorf("WithMetadata: %w", err)
		}
		s.md = s.md.merge(m)
		return nil
	}
}

// WithDialOptions adds gRPC dial options (credentials, keepalive, more
// interceptors, which run after raytpu's, flow-control windows such as
// grpc.WithInitialWindowSize and grpc.WithInitialConnWindowSize). They
// come after NewGRPC's own and win. Without transport credentials the
// connection is plaintext, as Serve's proxy serves; credentials given here
// replace that default.
func WithDialOptions(opts ...grpc.DialOption) GRPCOption {
	return func(s *grpcSettings) error {
		for i, o := range opts {
			if o == nil {
				return fmt.Errorf("WithDialOptions: option %d is nil", i)
			}
		}
		s.dialOpts = append(s.dialOpts, opts...)
		return nil
	}
}

// WithTransportCredentials sets the connection's transport credentials,
// for a proxy behind TLS (plaintext by default); the same as passing
// grpc.WithTransportCredentials through [WithDialOptions].
func WithTransportCredentials(creds credentials.TransportCredentials) GRPCOption {
	return func(s *grpcSettings) error {
		if creds == nil {
			return errors.New("WithTransportCredentials: credentials are nil")
		}
		s.creds = creds
		return nil
	}
}

// NewGRPC returns a connection to Serve's gRPC proxy at target
// ("127.0.0.1:9000", or any gRPC target), with [UnaryInterceptor] and
// [StreamInterceptor] setting the routing metadata of every call. Use it
// with any generated stub: servev1.NewPredictorClient(conn).
//
// The transport is grpc-go's as it comes (Go's net package, grpc-go's
// flow control and buffers); NewGRPC adds only the interceptors and, by
// default, plaintext credentials. Tune it with [WithDialOptions].
func NewGRPC(target string, opts ...GRPCOption) (*grpc.ClientConn, error) {
	if strings.TrimSpace(target) == "" {
		return nil, errors.New("serve client: NewGRPC: target is empty (the gRPC proxy's host:port, e.g. 127.0.0.1:9000)")
	}
	var s grpcSettings
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("serve client: NewGRPC: nil option")
		}
		if err := o(&s); err != nil {
			return nil, fmt.Errorf("serve client: NewGRPC: %w", err)
		}
	}
	creds := s.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	dial := []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(UnaryInterceptor(s.md)),
		grpc.WithChainStreamInterceptor(StreamInterceptor(s.md)),
		grpc.WithTransportCredentials(creds),
	}
	conn, err := grpc.NewClient(target, append(dial, s.dialOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("serve client: NewGRPC: %w", err)
	}
	return conn, nil
}
