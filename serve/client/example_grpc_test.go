package client_test

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// doubler stands in for Serve's gRPC proxy in the example: it doubles the
// tensor "x" and says which application the call named.
type doubler struct {
	servev1.UnimplementedPredictorServer
}

func (doubler) Predict(ctx context.Context, req *servev1.PredictRequest) (*servev1.PredictResponse, error) {
	xs, err := req.Inputs["x"].Float32s()
	if err != nil {
		return nil, err
	}
	for i := range xs {
		xs[i] *= 2
	}
	y, err := servev1.Float32Tensor(xs)
	md, _ := metadata.FromIncomingContext(ctx)
	return &servev1.PredictResponse{Outputs: map[string]*servev1.Tensor{
		"y": y, "application": {Dtype: fmt.Sprint(md.Get(client.KeyApplication))}}}, err
}

// NewGRPC connects to Serve's gRPC proxy (here a local stand-in) with the
// routing metadata on grpc-go's own transport; any generated stub works on
// it.
func ExampleNewGRPC() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	proxy := grpc.NewServer()
	servev1.RegisterPredictorServer(proxy, doubler{})
	go proxy.Serve(l)
	defer proxy.Stop()

	// client.WithDialOptions passes grpc-go's own options (keepalive,
	// flow-control windows, TLS) through.
	conn, err := client.NewGRPC(l.Addr().String(), client.WithApplication("linear"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	x, _ := servev1.Float32Tensor([]float32{1, 2, 3})
	resp, err := stub.Predict(context.Background(), &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}})
	if err != nil {
		fmt.Println(err)
		return
	}
	y, _ := resp.Outputs["y"].Float32s()
	fmt.Println("y:", y, "application:", resp.Outputs["application"].GetDtype())
	// Output: y: [2 4 6] application: [linear]
}
