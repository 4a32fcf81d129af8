// Package servev1 is the gRPC service raytpu ships for models served with
// Ray Serve: Predictor.Predict, named tensors in and named tensors out
// (proto/raytpu/serve/v1/predictor.proto). It holds the Go code generated
// from that file (protoc-gen-go, protoc-gen-go-grpc), the generated Python
// (python/raytpu/serve/v1/predictor_pb2.py and predictor_pb2_grpc.py, by
// grpcio-tools) with a small Python helper (tensor.py: Tensors to numpy
// arrays and back), and Go helpers for building and reading [Tensor]s.
// generate.sh regenerates every generated file (go generate runs it); a
// test proves the committed files are byte for byte what it produces.
//
// # Serving the service from Ray Serve
//
// Serve's gRPC proxy needs the service's servicer function in the Serve
// config's grpc_options (serve.GRPCOptions, [ServicerFunction]). The
// proxy actor has no runtime_env: the generated Python must be importable
// in the cluster's base Python environment on every node that runs a
// proxy, and on every node that runs a replica. Write it with
// [WritePython] into a directory and put that directory on every node's
// PYTHONPATH before `ray start` (or copy it into the image's
// site-packages). The deployment's ingress class then answers Predict:
//
//	from raytpu.serve.v1 import tensor
//
//	@serve.deployment
//	class Model:
//	    def Predict(self, request):
//	        x = tensor.inputs(request)["x"]
//	        return tensor.response({"y": 2 * x})
//
// A Go program calls it through any generated stub with package
// serve/client's routing metadata (the application's name).
//
// The package imports only protobuf and gRPC: nothing of raytpu's.
package servev1

//go:generate ./generate.sh
