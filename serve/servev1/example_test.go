package servev1_test

import (
	"fmt"

	"github.com/raytpu/raytpu/serve/servev1"
)

func ExampleFloat32Tensor() {
	x, err := servev1.Float32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	if err != nil {
		panic(err)
	}
	req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": x}}
	back, _ := req.Inputs["x"].Float32s()
	fmt.Println(x.Dtype, x.Shape, len(x.Raw), "bytes;", back)
	fmt.Println(servev1.ServicerFunction)
	// Output:
	// float32 [2 2] 16 bytes; [1 2 3 4]
	// raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server
}
