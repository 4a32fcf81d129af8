package serve_test

import (
	"fmt"

	"github.com/raytpu/raytpu/serve"
)

// grpc_options for raytpu's Predictor service (servev1.ServicerFunction);
// put the result in the Serve config that starts Serve (for the ray
// dashboard client: ray.ServeDeployConfig.GRPCOptions).
func ExampleGRPCOptions() {
	opts := serve.GRPCOptions{
		Port:              9000,
		ServicerFunctions: []string{"raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"},
	}
	raw, err := opts.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(raw))

	_, err = serve.GRPCOptions{Port: 9000}.Compile()
	fmt.Println(err)
	// Output:
	// {"port":9000,"grpc_servicer_functions":["raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"]}
	// grpc_options.grpc_servicer_functions: Required value: at least one add_<Service>Servicer_to_server import path, e.g. "raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"; without one Ray starts no gRPC proxy
}
