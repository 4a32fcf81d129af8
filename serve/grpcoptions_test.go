package serve_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/serve"
)

const predictorServicer = "raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"

var grpcAccepted = []struct {
	name string
	opts serve.GRPCOptions
	want string
}{
	{"defaults", serve.GRPCOptions{ServicerFunctions: []string{predictorServicer}},
		`{"grpc_servicer_functions":["raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"]}`},
	{"everything", serve.GRPCOptions{Port: 9100, ServicerFunctions: []string{predictorServicer, "pkg.mod:add_FooServicer_to_server"}, RequestTimeoutS: new(2.5), EnableReflection: new(false)},
		`{"port":9100,"grpc_servicer_functions":["raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server","pkg.mod:add_FooServicer_to_server"],"request_timeout_s":2.5,"enable_reflection":false}`},
}

func TestGRPCOptionsCompile(t *testing.T) {
	t.Parallel()
	for _, tc := range grpcAccepted {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.opts.Compile()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Compile() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGRPCOptionsRejects(t *testing.T) {
	t.Parallel()
	type want struct {
		Field string
		Type  field.Type
	}
	for _, tc := range []struct {
		name string
		opts serve.GRPCOptions
		want []want
	}{
		{"no servicer", serve.GRPCOptions{}, []want{{"grpc_options.grpc_servicer_functions", field.TypeRequired}}},
		{"everything wrong", serve.GRPCOptions{Port: 70000, ServicerFunctions: []string{"", "nodots", "a:b:c"}, RequestTimeoutS: new(0.0)}, []want{
			{"grpc_options.port", field.TypeInvalid},
			{"grpc_options.grpc_servicer_functions[0]", field.TypeRequired},
			{"grpc_options.grpc_servicer_functions[1]", field.TypeInvalid},
			{"grpc_options.grpc_servicer_functions[2]", field.TypeInvalid},
			{"grpc_options.request_timeout_s", field.TypeInvalid},
		}},
		{"negative port", serve.GRPCOptions{Port: -1, ServicerFunctions: []string{predictorServicer}}, []want{{"grpc_options.port", field.TypeInvalid}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw, err := tc.opts.Compile()
			var list field.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Compile() = %s, %v; want a field.ErrorList", raw, err)
			}
			var got []want
			for _, e := range list {
				got = append(got, want{e.Field, e.Type})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// The installed Ray's own gRPCOptionsSchema takes every compiled
// grpc_options without dropping a key, inside a whole ServeDeploySchema,
// and Ray's is_grpc_enabled says the proxy starts.
func TestGRPCOptionsAreRays(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	var in []json.RawMessage
	for _, tc := range grpcAccepted {
		raw, err := tc.opts.Compile()
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, raw)
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
from ray.serve.schema import ServeDeploySchema, gRPCOptionsSchema
from ray.serve.config import gRPCOptions
from ray.serve._private.utils import is_grpc_enabled
out = []
for raw in json.load(sys.stdin):
    s = gRPCOptionsSchema.model_validate(raw)
    dropped = sorted(set(raw) - set(s.model_fields_set))
    ServeDeploySchema.model_validate({"grpc_options": raw, "applications": []})
    out.append({"dropped": dropped, "enabled": is_grpc_enabled(gRPCOptions(**s.model_dump())), "echo": s.model_dump(exclude_unset=True)})
json.dump(out, sys.stdout)
`
	cmd := exec.CommandContext(t.Context(), py, "-c", script)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Ray's schema rejects a compiled grpc_options: %v\n%s", err, stderr.String())
	}
	var verdicts []struct {
		Dropped []string        `json:"dropped"`
		Enabled bool            `json:"enabled"`
		Echo    json.RawMessage `json:"echo"`
	}
	if err := json.Unmarshal(out, &verdicts); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, v := range verdicts {
		name := grpcAccepted[i].name
		if len(v.Dropped) > 0 || !v.Enabled {
			t.Errorf("%s: Ray dropped %v, gRPC enabled %v; want nothing dropped and the proxy enabled", name, v.Dropped, v.Enabled)
		}
		var echo, sent map[string]any
		if err := json.Unmarshal(v.Echo, &echo); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(in[i], &sent); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sent, echo); diff != "" {
			t.Errorf("%s: Ray's model of the options differs from what raytpu sent (-sent +ray):\n%s", name, diff)
		}
	}
}
