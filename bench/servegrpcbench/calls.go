package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/raytpu/raytpu/bench/cpubench"
	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// benchConfig is one timed run of -grpc.
type benchConfig struct {
	target, client, side string
	n, conc, warm, size  int
}

// clients are the values of -client.
var clients = []string{"raytpu", "raytpu-fixed-windows", "grpc-go"}

// fixedWindows are flow-control windows a caller may pass to NewGRPC
// through WithDialOptions: fixed, so grpc-go sends no
// bandwidth-delay-product PINGs.
var fixedWindows = []grpc.DialOption{grpc.WithInitialWindowSize(4 << 20), grpc.WithInitialConnWindowSize(16 << 20)}

// dial connects as cfg.client says and returns the ctx every call uses.
// raytpu is NewGRPC as it comes; raytpu-fixed-windows is NewGRPC with
// fixedWindows passed through WithDialOptions. grpc-go is the floor:
// grpc.NewClient as a program would use it without raytpu, the routing
// metadata set once on the ctx.
func dial(ctx context.Context, cfg benchConfig) (*grpc.ClientConn, context.Context, error) {
	switch cfg.client {
	case "raytpu":
		conn, err := client.NewGRPC(cfg.target, client.WithApplication(App))
		return conn, ctx, err
	case "raytpu-fixed-windows":
		conn, err := client.NewGRPC(cfg.target, client.WithApplication(App), client.WithDialOptions(fixedWindows...))
		return conn, ctx, err
	case "grpc-go":
		conn, err := grpc.NewClient(cfg.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		return conn, metadata.AppendToOutgoingContext(ctx, client.KeyApplication, App), err
	default:
		return nil, nil, fmt.Errorf("-client %q: want one of %q", cfg.client, clients)
	}
}

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds() float64 { return cpubench.CPUTime().Seconds() }

func bench(ctx context.Context, cfg benchConfig) error {
	conn, ctx, err := dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	xs := make([]float32, cfg.size)
	for i := range xs {
		xs[i] = float32(i)
	}
	x, err := servev1.Float32Tensor(xs)
	if err != nil {
		return err
	}
	req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}}
	run := func(total int) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, cfg.conc)
		for range cfg.conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(total) {
					resp, err := stub.Predict(ctx, req)
					if err != nil {
						errs <- err
						return
					}
					if y := resp.Outputs["y"]; y == nil || len(y.Raw) != 4*cfg.size {
						errs <- fmt.Errorf("answer %v has no y of %d float32", resp, cfg.size)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := run(cfg.warm); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	cpu0, t0 := cpuSeconds(), time.Now()
	if err := run(cfg.n); err != nil {
		return err
	}
	wall, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
	side := cfg.side
	if side == "" {
		side = "go"
		if cfg.client != "raytpu" {
			side = "go-" + cfg.client
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"side": side, "requests": cfg.n, "concurrency": cfg.conc, "seconds": wall,
		"rps": float64(cfg.n) / wall, "cpu_seconds": cpu, "cpu_s_per_1000": cpu / float64(cfg.n) * 1000,
	})
}
