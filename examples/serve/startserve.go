package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/servev1"
)

// startServe starts Serve on the cluster with the HTTP proxy at cfg.Proxy
// and the gRPC proxy, serving raytpu's Predictor, on cfg.GRPC's port,
// unless Serve already runs (its options cannot change then; Ray ignores
// new ones). It is the only place the program sets Serve-wide options.
func startServe(ctx context.Context, cfg config, out io.Writer) error {
	rc, err := ray.NewClient(cfg.Address)
	if err != nil {
		return err
	}
	d, err := rc.ServeApplications(ctx)
	if err != nil {
		return err
	}
	if d.Running() {
		if d.GRPCOptions == nil || len(d.GRPCOptions.GRPCServicerFunctions) == 0 {
			fmt.Fprintln(out, "note: Serve already runs without a gRPC proxy; the gRPC query will fail (restart Serve to add one)")
		}
		return nil
	}
	hu, err := url.Parse(cfg.Proxy)
	if err != nil {
		return fmt.Errorf("--proxy %q: %w", cfg.Proxy, err)
	}
	host := hu.Hostname()
	httpPort, err := strconv.Atoi(hu.Port())
	if err != nil {
		return fmt.Errorf("--proxy %q: want http://host:port", cfg.Proxy)
	}
	_, gp, err := net.SplitHostPort(cfg.GRPC)
	if err != nil {
		return fmt.Errorf("--grpc %q: want host:port", cfg.GRPC)
	}
	grpcPort, err := strconv.Atoi(gp)
	if err != nil {
		return fmt.Errorf("--grpc %q: want host:port", cfg.GRPC)
	}
	raw, err := serve.GRPCOptions{Port: grpcPort, ServicerFunctions: []string{servev1.ServicerFunction}}.Compile()
	if err != nil {
		return err
	}
	var grpcOpts ray.ServeGRPCOptions
	if err := json.Unmarshal(raw, &grpcOpts); err != nil {
		return err
	}
	fmt.Fprintf(out, "starting Serve: HTTP proxy %s, gRPC proxy port %d serving %s\n", cfg.Proxy, grpcPort, servev1.ServicerFunction)
	return rc.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: host, Port: httpPort},
		GRPCOptions:   &grpcOpts,
		Applications:  []json.RawMessage{},
	})
}
