package client_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// echoMetadata is a real gRPC server whose handlers report the routing
// metadata they received; it checks what the interceptors send, for unary
// and streaming calls, and the error mapping for every code.
type echoMetadata struct {
	servev1.UnimplementedPredictorServer
}

func routing(ctx context.Context) map[string]string {
	md, _ := metadata.FromIncomingContext(ctx)
	out := map[string]string{}
	for _, k := range []string{client.KeyApplication, client.KeyRequestID, client.KeyMultiplexedModelID, client.KeySessionID} {
		if v := md.Get(k); len(v) > 0 {
			out[k] = v[len(v)-1]
			if len(v) > 1 {
				out[k+"#count"] = "many"
			}
		}
	}
	return out
}

func (echoMetadata) Predict(ctx context.Context, req *servev1.PredictRequest) (*servev1.PredictResponse, error) {
	if c, ok := req.Inputs["code"]; ok {
		v, _ := c.Float32s()
		grpc.SetTrailer(ctx, metadata.Pairs(client.KeyRequestID, "rid-9"))
		return nil, status.Error(codes.Code(v[0]), "asked for it")
	}
	out := map[string]*servev1.Tensor{}
	for k, v := range routing(ctx) {
		out[k] = &servev1.Tensor{Dtype: v}
	}
	return &servev1.PredictResponse{Outputs: out}, nil
}

func startEcho(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		got := routing(stream.Context())
		return stream.SendMsg(&servev1.PredictResponse{Outputs: map[string]*servev1.Tensor{
			"application": {Dtype: got[client.KeyApplication]}}})
	}))
	servev1.RegisterPredictorServer(s, echoMetadata{})
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

func TestInterceptorsSetMetadata(t *testing.T) {
	t.Parallel()
	addr := startEcho(t)
	conn, err := client.NewGRPC(addr, client.WithApplication("a"), client.WithMetadata(client.Metadata{SessionID: "s1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts []grpc.CallOption
		want map[string]string
	}{
		{"defaults", t.Context(), nil, map[string]string{"application": "a", "session_id": "s1"}},
		{"per call", t.Context(), []grpc.CallOption{client.Application("b"), client.RequestID("r1"), client.MultiplexedModelID("m1")},
			map[string]string{"application": "b", "request_id": "r1", "multiplexed_model_id": "m1", "session_id": "s1"}},
		{"replaces the ctx's own key", metadata.AppendToOutgoingContext(t.Context(), "application", "stale"), nil,
			map[string]string{"application": "a", "session_id": "s1"}},
	} {
		resp, err := stub.Predict(tc.ctx, &servev1.PredictRequest{}, tc.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := map[string]string{}
		for k, v := range resp.Outputs {
			got[k] = v.Dtype
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: metadata the server saw (-want +got):\n%s", tc.name, diff)
		}
	}

	// A streaming call through the stream interceptor.
	desc := &grpc.StreamDesc{StreamName: "Stream", ServerStreams: true}
	s, err := conn.NewStream(t.Context(), desc, "/raytpu.test.Echo/Stream", client.Application("streamed"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMsg(&servev1.PredictRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var resp servev1.PredictResponse
	if err := s.RecvMsg(&resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.Outputs["application"].GetDtype(); got != "streamed" {
		t.Errorf("stream: server saw application %q, want streamed", got)
	}
}

func TestGRPCErrorMapping(t *testing.T) {
	t.Parallel()
	conn, err := client.NewGRPC(startEcho(t), client.WithApplication("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	for _, tc := range []struct {
		code codes.Code
		want error
	}{
		{codes.NotFound, client.ErrNotFound},
		{codes.Unavailable, client.ErrUnavailable},
		{codes.ResourceExhausted, client.ErrUnavailable},
		{codes.DeadlineExceeded, client.ErrTimeout},
		{codes.Internal, client.ErrInternal},
		{codes.InvalidArgument, nil},
	} {
		code, _ := servev1.Float32Tensor([]float32{float32(tc.code)})
		_, err := stub.Predict(t.Context(), &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"code": code}})
		var ge *client.GRPCError
		if !errors.As(err, &ge) || status.Code(err) != tc.code || ge.RequestID != "rid-9" || ge.Application != "a" {
			t.Errorf("%s: err = %v, want a *GRPCError with the code, request id and application", tc.code, err)
			continue
		}
		for _, s := range []error{client.ErrNotFound, client.ErrUnavailable, client.ErrTimeout, client.ErrInternal} {
			if errors.Is(err, s) != (s == tc.want) {
				t.Errorf("%s: errors.Is(err, %v) = %v", tc.code, s, errors.Is(err, s))
			}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: a server's status is not the caller's ctx ending", tc.code)
		}
	}
}

// timerNotFired is a ctx whose deadline has passed while its timer has not
// yet marked it done, as on a busy machine when a server's status arrives
// first.
type timerNotFired struct {
	context.Context
	deadline time.Time
}

func (c timerNotFired) Deadline() (time.Time, bool) { return c.deadline, true }

func TestGRPCDeadlineIsTheCallers(t *testing.T) {
	t.Parallel()
	conn, err := client.NewGRPC(startEcho(t), client.WithApplication("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	code, _ := servev1.Float32Tensor([]float32{float32(codes.DeadlineExceeded)})
	req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"code": code}}

	late := timerNotFired{t.Context(), time.Now().Add(-time.Millisecond)}
	_, err = stub.Predict(late, req)
	if !errors.Is(err, client.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline passed, timer not fired: err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	_, err = stub.Predict(ctx, req)
	if !errors.Is(err, client.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline an hour away: err = %v, want the server's DEADLINE_EXCEEDED, not the caller's", err)
	}
}

func TestNewGRPCValidates(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]client.GRPCOption{
		"empty application": {client.WithApplication("")},
		"bad metadata":      {client.WithMetadata(client.Metadata{RequestID: "a\nb"})},
		"nil dial option":   {client.WithDialOptions(nil)},
		"nil credentials":   {client.WithTransportCredentials(nil)},
		"nil option":        {nil},
	} {
		if c, err := client.NewGRPC("127.0.0.1:1", opts...); err == nil {
			c.Close()
			t.Errorf("%s: NewGRPC succeeded, want an error", name)
		}
	}
	if _, err := client.NewGRPC(" "); err == nil {
		t.Error("empty target: no error")
	}
}
