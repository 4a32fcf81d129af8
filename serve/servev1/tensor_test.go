package servev1_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/serve/servev1"
)

func TestFloat32Tensor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		values  []float32
		shape   []int64
		wantErr bool
	}{
		{name: "vector", values: []float32{1, 2.5, -3}},
		{name: "matrix", values: []float32{1, 2, 3, 4, 5, 6}, shape: []int64{2, 3}},
		{name: "scalar", values: []float32{7}, shape: []int64{}},
		{name: "empty", values: []float32{}},
		{name: "shape too big", values: []float32{1, 2}, shape: []int64{3}, wantErr: true},
		{name: "negative dim", values: []float32{}, shape: []int64{-1}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tn, err := servev1.Float32Tensor(tc.values, tc.shape...)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Float32Tensor(%v, %v) = %v, want an error", tc.values, tc.shape, tn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tn.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.values, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFloat32sRejects(t *testing.T) {
	t.Parallel()
	for name, tn := range map[string]*servev1.Tensor{
		"int64":          {Dtype: "int64", Shape: []int64{1}, Raw: make([]byte, 8)},
		"ragged raw":     {Dtype: "float32", Shape: []int64{1}, Raw: make([]byte, 5)},
		"count mismatch": {Dtype: "float32", Shape: []int64{3}, FloatVal: []float32{1}},
	} {
		if v, err := tn.Float32s(); err == nil {
			t.Errorf("%s: Float32s() = %v, want an error", name, v)
		}
	}
}

// Tensors cross between Go and the shipped Python helper unchanged: Go
// encodes, Python decodes with numpy, doubles, and encodes back.
func TestTensorsCrossToPython(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	x, err := servev1.Float32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	req, err := proto.Marshal(&servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{
		"x": x,
		"f": {Shape: []int64{2}, FloatVal: []float32{0.5, 1.5}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	script := `
import base64, sys
from raytpu.serve.v1 import predictor_pb2, tensor
req = predictor_pb2.PredictRequest.FromString(base64.b64decode(sys.stdin.read()))
ins = tensor.inputs(req)
out = tensor.response({"y": ins["x"] * 2, "shape": list(ins["x"].shape), "f": ins["f"].sum()})
sys.stdout.write(base64.b64encode(out.SerializeToString()).decode())
`
	cmd := exec.CommandContext(t.Context(), py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH=python")
	cmd.Stdin = strings.NewReader(base64.StdEncoding.EncodeToString(req))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	raw, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil {
		t.Fatal(err)
	}
	var resp servev1.PredictResponse
	if err := proto.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	y := resp.Outputs["y"]
	got, err := y.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%v %v %s", got, y.Shape, y.Dtype) != "[2 4 6 8 10 12] [2 3] float32" {
		t.Errorf("y = %v shape %v dtype %s, want [2 4 6 8 10 12] shape [2 3] float32", got, y.Shape, y.Dtype)
	}
	if s := resp.Outputs["shape"]; s.Dtype != "int64" || fmt.Sprint(s.Shape) != "[2]" || len(s.Raw) != 16 || s.Raw[0] != 2 || s.Raw[8] != 3 {
		t.Errorf("shape output = %v, want int64 [2 3]", s)
	}
	if f, err := resp.Outputs["f"].Float32s(); err != nil || fmt.Sprint(f) != "[2]" || len(resp.Outputs["f"].Shape) != 0 {
		t.Errorf("f = %v, %v (shape %v), want the scalar 2", f, err, resp.Outputs["f"].GetShape())
	}
}
