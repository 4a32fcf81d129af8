package client_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// BenchmarkPredict calls a local grpc-go Predictor server through
// NewGRPC and through a bare grpc-go connection with the metadata set by
// hand; both use grpc-go's transport defaults, so the difference per op is
// raytpu's interceptor.
func BenchmarkPredict(b *testing.B) {
	addr, _ := startFrameLogged(b)
	x, err := servev1.Float32Tensor(make([]float32, 16))
	if err != nil {
		b.Fatal(err)
	}
	req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}}
	for _, tc := range []struct {
		name string
		dial func() (*grpc.ClientConn, context.Context, error)
	}{
		{"raytpu", func() (*grpc.ClientConn, context.Context, error) {
			c, err := client.NewGRPC(addr, client.WithApplication("bench"))
			return c, b.Context(), err
		}},
		{"grpc-go", func() (*grpc.ClientConn, context.Context, error) {
			c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			return c, metadata.AppendToOutgoingContext(b.Context(), client.KeyApplication, "bench"), err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			conn, ctx, err := tc.dial()
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			stub := servev1.NewPredictorClient(conn)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := stub.Predict(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if resp.Outputs[client.KeyApplication].GetDtype() != "bench" {
					b.Fatalf("server saw %v, want application bench", resp.Outputs)
				}
			}
		})
	}
}
