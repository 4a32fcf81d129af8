package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve/llm"
)

// Every spec case compiles as it says: a plan for a valid spec, the
// same bytes twice and as its golden file; for an invalid one every
// error at its field, with what is valid, and no plan.
func TestCompile(t *testing.T) {
	t.Parallel()
	if len(appCases) < 40 {
		t.Fatalf("only %d spec cases; the cross-check with Ray's LLMConfig needs 40 or more", len(appCases))
	}
	for _, tc := range appCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan, err := tc.app.Compile()
			got := field.Refs(err)
			if !cmp.Equal(tc.want, got) {
				t.Fatalf("errors %v, want %v:\n%v", got, tc.want, err)
			}
			if tc.want == nil {
				checkPlan(t, tc, plan)
				return
			}
			var fe *field.Error
			switch {
			case plan != nil:
				t.Errorf("a plan with errors")
			case !errors.As(err, &fe) || fe.Detail == "" && fe.ValidValues == nil:
				t.Errorf("error %v: want a field.Error saying what is valid", err)
			}
		})
	}
}

// checkPlan checks the plan of a valid spec case.
func checkPlan(t *testing.T, tc appCase, plan *placement.Plan) {
	t.Helper()
	if plan.Kind != placement.KindApplication || plan.Serve == nil || plan.Serve.Config.ImportPath != llm.ImportPath {
		t.Fatalf("plan kind %q, serve %+v", plan.Kind, plan.Serve)
	}
	if len(plan.Slices) != tc.slices {
		t.Errorf("%d slice groups, want %d", len(plan.Slices), tc.slices)
	}
	a, err := plan.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	again, err := tc.app.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := again.MarshalIndent(); !bytes.Equal(a, b) {
		t.Errorf("two compiles differ:\n%s\n%s", a, b)
	}
	if tc.golden != "" {
		golden.Assert(t, tc.golden+".golden.json", a)
	}
}

// Each replica that may run reserves a whole slice: the slice groups are
// named by the model's deployment and hold every host of the topology,
// whatever the tensor-parallel degree.
func TestSliceGroupsHoldTheWholeTopology(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		tp             int
		bundles, tpu   int
		hosts, replica int
	}{
		{"tp 1", 1, 8, 1, 2, 0},
		{"tp 2", 2, 4, 2, 2, 0},
		{"tp 4", 4, 2, 4, 2, 0},
		{"tp 8", 8, 2, 4, 2, 0},
	} {
		plan, err := app(model(func(c *llm.LLMConfig) {
			c.EngineKwargs = map[string]any{"tensor_parallel_size": tc.tp}
		})).Compile()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		g := plan.Slices[0]
		if g.Part.Name != "LLMServer:m" || g.Part.Role != placement.RoleReplica || g.Part.Index != tc.replica {
			t.Errorf("%s: part %+v", tc.name, g.Part)
		}
		if g.BundlesPerSlice != tc.bundles || g.BundleResources["TPU"] != float64(tc.tpu) || g.HostsPerSlice != tc.hosts || !g.MultiHost {
			t.Errorf("%s: %s, want %d bundles of %d TPU on %d hosts", tc.name, g, tc.bundles, tc.tpu, tc.hosts)
		}
		if g.BundleResources["accelerator_type:TPU-V4"] != 0.001 || g.BundleResources["CPU"] != 1 || len(g.Heads) != 1 {
			t.Errorf("%s: bundle %v, heads %v", tc.name, g.BundleResources, g.Heads)
		}
	}
}

// The args are LLMServingArgs as Ray's builder takes them: the resolved
// accelerator type and kind, and nothing of the Go spec's own shape.
func TestArgsAreLLMServingArgs(t *testing.T) {
	t.Parallel()
	plan, err := app(model(func(c *llm.LLMConfig) {
		c.ModelLoadingConfig.ModelSource = "s3://b/m"
		c.ModelLoadingConfig.ExtraFiles = []llm.ExtraFile{{BucketURI: "s3://b/x", DestinationPath: "/x"}}
	})).Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(plan.Serve.Config.Args)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"llm_configs":[{"accelerator_config":{"kind":"tpu","topology":"2x2x2"},"accelerator_type":"TPU-V4",` +
		`"model_loading_config":{"model_id":"m","model_source":{"bucket_uri":"s3://b/m","extra_files":[{"bucket_uri":"s3://b/x","destination_path":"/x"}]}}}]}`
	if string(b) != want {
		t.Errorf("args\n%s\nwant\n%s", b, want)
	}
}

// The plan shares nothing with the spec: changing the spec's maps after
// Compile changes nothing in the plan.
func TestPlanOwnsItsArgs(t *testing.T) {
	t.Parallel()
	kw := map[string]any{"max_model_len": 128}
	spec := app(model(func(c *llm.LLMConfig) { c.EngineKwargs = kw }))
	plan, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := plan.MarshalIndent()
	kw["max_model_len"] = 4096
	spec.LLMConfigs[0].AcceleratorConfig.Topology = "4x4x4"
	if after, _ := plan.MarshalIndent(); !bytes.Equal(before, after) {
		t.Errorf("changing the spec changed the plan:\n%s\n%s", before, after)
	}
}

// An LLMConfig reads from and writes to Ray's JSON, model_source a string
// or a CloudMirrorConfig.
func TestLLMConfigJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"model_loading_config":{"model_id":"m","model_source":{"bucket_uri":"gs://b/m","extra_files":[{"bucket_uri":"gs://b/x","destination_path":"/x"}]}},"accelerator_type":"TPU-V4"}`,
		`{"model_loading_config":{"model_id":"m","model_source":"/models/m","tokenizer_source":"t"},"accelerator_config":{"kind":"cpu"},"deployment_config":{"num_replicas":"auto"}}`,
		`{"model_loading_config":{"model_id":"m"},"engine_kwargs":{"tensor_parallel_size":4}}`,
	} {
		var c llm.LLMConfig
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal([]byte(in), &a)
		json.Unmarshal(out, &b)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: round trip (-in +out):\n%s", in, diff)
		}
	}
	var c llm.LLMConfig
	if err := json.Unmarshal([]byte(`{"model_loading_config":{"model_id":"m","model_source":{"bucket_uri":"s3://b","extra_files":[{"bucket_uri":"s3://b/f","destination_path":"/f"}]}}}`), &c); err != nil ||
		c.ModelLoadingConfig.ModelSource != "s3://b" || len(c.ModelLoadingConfig.ExtraFiles) != 1 {
		t.Errorf("mirror read as %+v (%v)", c.ModelLoadingConfig, err)
	}
}
