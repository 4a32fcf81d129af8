package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/raytpu/raytpu/serve/llm"
)

// BenchmarkCompile compiles the typical two-model application (three
// slice groups); the Python side of the comparison is Ray's LLMConfig and
// build_openai_app on the same args.
func BenchmarkCompile(b *testing.B) {
	var a llm.OpenAIApp
	for _, tc := range appCases {
		if tc.name == "typical" {
			a = tc.app
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Compile(); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzModelLoadingConfigJSON: whatever reads as a model_loading_config
// writes back to JSON that reads as the same config.
func FuzzModelLoadingConfigJSON(f *testing.F) {
	f.Add(`{"model_id":"m","model_source":"/models/m"}`)
	f.Add(`{"model_id":"m","model_source":{"bucket_uri":"gs://b","extra_files":[{"bucket_uri":"gs://b/x","destination_path":"/x"}]}}`)
	f.Add(`{"model_id":"m","model_source":null,"tokenizer_source":"t"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var m llm.ModelLoadingConfig
		if json.Unmarshal([]byte(in), &m) != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		var again llm.ModelLoadingConfig
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if b, _ := json.Marshal(again); string(b) != string(out) {
			t.Errorf("%s read back as %s", out, b)
		}
	})
}
