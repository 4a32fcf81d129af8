package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// The program's default run, on the simulator: each replica's slice on a
// v4-16 of its own, and no question asked.
func TestOnTheSimulator(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	st, err := run(t.Context(), defaults(), &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if st.Ran || st.State != backend.ServiceSimulated {
		t.Errorf("status %s ran=%v, want SIMULATED and not run", st.State, st.Ran)
	}
	for _, want := range []string{
		`deployment "LLMServer:tiny" replica 0 bundle 0 -> v4-16-0-w0 (slice v4-16-0, CREATED)`,
		`deployment "LLMServer:tiny" replica 0 bundle 1 -> v4-16-0-w1 (slice v4-16-0, CREATED)`,
		`deployment "LLMServer:tiny" replica 1 bundle 0 -> v4-16-1-w0 (slice v4-16-1, CREATED)`,
		`deployment "LLMServer:tiny" replica 1 bundle 1 -> v4-16-1-w1 (slice v4-16-1, CREATED)`,
		"no OpenAI endpoint to ask",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A second replica on a cluster of one v4-16 finds no free slice: the
// error names its pending slice head reservation.
func TestNoFreeSlice(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Cluster = "v4-16,cpu:1"
	var out bytes.Buffer
	_, err := run(t.Context(), cfg, &out)
	var pe *backend.PlacementError
	if !errors.As(err, &pe) || !slices.Contains(pe.Diagnosis.Codes(), placement.CodeHeadReservationFailed) {
		t.Fatalf("run = %v; want a PlacementError with %s", err, placement.CodeHeadReservationFailed)
	}
	if !strings.Contains(err.Error(), `deployment "LLMServer:tiny" replica 1`) {
		t.Errorf("error does not name replica 1: %v", err)
	}
}

// Bad flags fail before any backend is reached, at their field.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		set   func(*config)
		field string
		text  string
	}{
		{"topology", func(c *config) { c.Topology = "2x2x3" }, "app.llm_configs[0].accelerator_config.topology", `"2x2x2"`},
		{"tensor parallel", func(c *config) { c.TP = 3 }, "app.llm_configs[0].engine_kwargs[tensor_parallel_size]", "do not divide evenly"},
		{"backend", func(c *config) { c.Backend = "k8s" }, "", "want sim, ray or kuberay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := defaults()
			c.set(&cfg)
			cfg.Address = "http://127.0.0.1:1" // never reached
			_, err := run(t.Context(), cfg, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("run = %v; want an error containing %q", err, c.text)
			}
			if c.field == "" {
				return
			}
			if fs := field.Errors(err); len(fs) != 1 || fs[0].Field != c.field {
				t.Errorf("field errors %v; want one at %s", fs, c.field)
			}
		})
	}
}
