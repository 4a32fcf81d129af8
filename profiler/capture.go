package profiler

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/profiler/internal/tslpb"
)

// Trace is one captured profile of one host. WriteLogDir of a nil *Trace
// returns an error saying to pass the Trace that Capture returns.
type Trace struct {
	// Host is the host the trace is of; the file is <Host>.xplane.pb.
	Host string
	// XSpace is the serialized trace, exactly as the server sent it; it is
	// the content of an .xplane.pb file.
	XSpace []byte
	// Summary is what Parse made of XSpace.
	Summary *Summary
}

// Capture asks the profiler server at target ("host:port", where
// jax.profiler.start_server listens) to trace for opts.Duration and
// returns the trace. The server sends the trace back in its response
// (ProfileRequest.emit_xspace), so this works from any machine that
// reaches the port. Capture fails if the trace has no events (see
// [Summary.Check]); the partial trace is still returned for inspection.
func Capture(ctx context.Context, target string, opts Options) (*Trace, error) {
	if err := opts.Validate(field.NewPath("profile")); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, field.Invalid(field.NewPath("profile", "target"), target, "must be host:port of a JAX profiler server")
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opts.maxTraceBytes())))
	if err != nil {
		return nil, fmt.Errorf("profiler %s: %w", target, err)
	}
	defer conn.Close()
	ms := uint64(opts.Duration / time.Millisecond)
	device := uint32(1)
	if opts.NoDeviceTracer {
		device = 0
	}
	python := uint32(0)
	if opts.PythonTracer {
		python = 1
	}
	req := &tslpb.ProfileRequest{
		DurationMs: ms,
		MaxEvents:  1_000_000,
		Opts: &tslpb.ProfileOptions{
			Version:           1,
			HostTracerLevel:   opts.hostTracerLevel(),
			DeviceTracerLevel: device,
			PythonTracerLevel: python,
			DurationMs:        ms,
		},
		SessionId:  strconv.FormatInt(time.Now().UnixNano(), 10),
		HostName:   host,
		EmitXspace: true,
	}
	// The server sleeps for the duration before it answers; wait for it
	// (and the transfer) but no longer than the caller allows.
	resp, err := tslpb.NewProfilerServiceClient(conn).Profile(ctx, req, grpc.WaitForReady(false))
	if err != nil {
		return nil, fmt.Errorf("profiler %s: Profile: %w", target, err)
	}
	if resp.GetXspace() == nil {
		return nil, fmt.Errorf("profiler %s: the response holds no trace; the server predates ProfileRequest.emit_xspace (jaxlib too old?)", target)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(resp.GetXspace())
	if err != nil {
		return nil, fmt.Errorf("profiler %s: re-encoding the trace: %w", target, err)
	}
	sum, err := summarise(resp.GetXspace())
	if err != nil {
		return nil, fmt.Errorf("profiler %s: %w", target, err)
	}
	t := &Trace{Host: opts.Host, XSpace: b, Summary: sum}
	if t.Host == "" {
		t.Host = host
		if len(sum.Hostnames) > 0 && checkFileName(sum.Hostnames[0]) == "" {
			t.Host = sum.Hostnames[0]
		}
	}
	if err := sum.Check(); err != nil {
		return t, fmt.Errorf("profiler %s: %w", target, err)
	}
	return t, nil
}
