// Command llmcompilebench drives the Go side of
// bench/llmcompilebench/vs-python.sh: it times llm.OpenAIApp.Compile of
// serve/llm's typical two-model application (typical.yaml, read as `raytpu
// plan -f` reads it) and prints one JSON object (see package cpubench),
// the median of -runs runs. It first checks that the application compiles
// to exactly the Serve config in -golden (the plan golden of serve/llm's
// tests), and writes that config to -config-out for the Python side, so
// both sides check the same thing.
//
//	llmcompilebench -runs 5 -app bench/llmcompilebench/typical.yaml -golden serve/llm/testdata/typical.golden.json -config-out /tmp/c.json
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/raytpu/raytpu/bench/cpubench"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/serve/llm"
)

func main() {
	runs := flag.Int("runs", 5, "benchmark runs; the median is printed")
	appFile := flag.String("app", "bench/llmcompilebench/typical.yaml", "the application, as a Serve LLM application file")
	golden := flag.String("golden", "serve/llm/testdata/typical.golden.json", "the plan golden whose serve.config the application must compile to")
	configOut := flag.String("config-out", "", "write the compiled Serve config (what the Python side checks) to this file")
	flag.Parse()
	if err := run(*runs, *appFile, *golden, *configOut); err != nil {
		fmt.Fprintln(os.Stderr, "llmcompilebench:", err)
		os.Exit(1)
	}
}

func run(runs int, appFile, golden, configOut string) error {
	var app llm.OpenAIApp
	if err := fieldfile.Load(appFile, fieldfile.ServeLLMApplication, field.NewPath("app"), &app); err != nil {
		return err
	}
	plan, err := app.Compile()
	if err != nil {
		return fmt.Errorf("%s does not compile: %w", appFile, err)
	}
	got, err := plan.Serve.Config.MarshalJSON()
	if err != nil {
		return err
	}
	want, err := goldenConfig(golden)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s compiles to a config other than %s's serve.config:\n%s\nwant\n%s", appFile, golden, got, want)
	}
	if configOut != "" {
		if err := os.WriteFile(configOut, got, 0o644); err != nil {
			return err
		}
	}
	r := cpubench.Median(runs, "llm.OpenAIApp.Compile", func() {
		if p, err := app.Compile(); err == nil {
			p.Serve.Config.MarshalJSON()
		}
	})
	return json.NewEncoder(os.Stdout).Encode(r)
}

// goldenConfig is the compact JSON of the golden plan's serve.config.
func goldenConfig(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var plan struct {
		Serve struct {
			Config json.RawMessage `json:"config"`
		} `json:"serve"`
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(plan.Serve.Config) == 0 {
		return nil, errors.New(path + ": no serve.config")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, plan.Serve.Config); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
