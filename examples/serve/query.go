package main

import (
	"context"
	"fmt"
	"io"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// answers are the model's replies to the same input over both proxies.
type answers struct {
	HTTP *answer // the JSON answer, with the hosts that computed it
	GRPC *gRPCAnswer
}

// gRPCAnswer is the model's Predictor reply.
type gRPCAnswer struct {
	Y         []float32
	HostSum   float32
	Devices   int64
	Processes int64
}

// queryHTTP posts {"x": cfg.X} to the application's route prefix.
func queryHTTP(ctx context.Context, cfg config) (*answer, error) {
	c, err := client.NewHTTP(cfg.Proxy)
	if err != nil {
		return nil, err
	}
	var a answer
	if err := c.Post(ctx, "/"+cfg.Name, map[string]any{"x": cfg.X}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// queryGRPC calls Predictor.Predict with the tensor "x", routed to the
// application by its name.
func queryGRPC(ctx context.Context, cfg config) (*gRPCAnswer, error) {
	conn, err := client.NewGRPC(cfg.GRPC, client.WithApplication(cfg.Name))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	xs := make([]float32, len(cfg.X))
	for i, v := range cfg.X {
		xs[i] = float32(v)
	}
	x, err := servev1.Float32Tensor(xs)
	if err != nil {
		return nil, err
	}
	resp, err := servev1.NewPredictorClient(conn).Predict(ctx, &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}})
	if err != nil {
		return nil, err
	}
	var a gRPCAnswer
	if a.Y, err = resp.Outputs["y"].Float32s(); err != nil {
		return nil, fmt.Errorf("output y: %w", err)
	}
	sum, err := resp.Outputs["host_sum"].Float32s()
	if err != nil || len(sum) != 1 {
		return nil, fmt.Errorf("output host_sum: %v (%d values)", err, len(sum))
	}
	a.HostSum = sum[0]
	for name, dst := range map[string]*int64{"devices": &a.Devices, "processes": &a.Processes} {
		t := resp.Outputs[name]
		if t.GetDtype() != "int64" || len(t.GetRaw()) != 8 {
			return nil, fmt.Errorf("output %s: want one int64, got %v", name, t)
		}
		*dst = int64(uint64(t.Raw[0]) | uint64(t.Raw[1])<<8 | uint64(t.Raw[2])<<16 | uint64(t.Raw[3])<<24 |
			uint64(t.Raw[4])<<32 | uint64(t.Raw[5])<<40 | uint64(t.Raw[6])<<48 | uint64(t.Raw[7])<<56)
	}
	return &a, nil
}

// query asks the model over HTTP, then over gRPC, and prints both answers.
func query(ctx context.Context, cfg config, out io.Writer) (*answers, error) {
	h, err := queryHTTP(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP query: %w", err)
	}
	fmt.Fprintf(out, "HTTP: %s answered y=%v (w*x+b over %d devices of %d hosts; host sum %v)\n", h.Replica, h.Y, h.Devices, h.Processes, h.HostSum)
	for _, host := range h.Hosts {
		fmt.Fprintf(out, "  host %d: node %.12s slice %s worker %s\n", host.Rank, host.NodeID, host.Labels["ray.io/tpu-slice-name"], host.Labels["ray.io/tpu-worker-id"])
	}
	g, err := queryGRPC(ctx, cfg)
	if err != nil {
		return &answers{HTTP: h}, fmt.Errorf("gRPC query: %w", err)
	}
	fmt.Fprintf(out, "gRPC: Predictor.Predict answered y=%v (over %d devices of %d hosts; host sum %v)\n", g.Y, g.Devices, g.Processes, g.HostSum)
	return &answers{HTTP: h, GRPC: g}, nil
}
