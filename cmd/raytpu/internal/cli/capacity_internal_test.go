package cli

import (
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/sim"
)

func TestParseQuota(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]sim.Quota{
		"google.com/tpu=8":             {TPU: 8},
		"google.com/tpu=0":             {},
		"spot:google.com/tpu=16":       {TPU: 16, Class: "spot"},
		"reservation:google.com/tpu=4": {TPU: 4, Class: "reservation"},
	} {
		got, err := parseQuota(in)
		if err != nil || got != want {
			t.Errorf("parseQuota(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "8", "google.com/tpu", "cpu=8", "google.com/tpu=x", "google.com/tpu=-1", "spto:google.com/tpu=8", ":google.com/tpu=8x"} {
		if _, err := parseQuota(in); err == nil {
			t.Errorf("parseQuota(%q): no error", in)
		}
	}
}

// Any --quota either parses to a valid quota that prints back as itself,
// or is a usage error; never a panic.
func FuzzParseQuota(f *testing.F) {
	for _, s := range []string{"google.com/tpu=8", "spot:google.com/tpu=16", "cpu=1", "google.com/tpu=-1", "::="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := parseQuota(s)
		if err != nil {
			if _, ok := err.(usageError); !ok {
				t.Fatalf("parseQuota(%q): %T %v, want a usage error", s, err, err)
			}
			return
		}
		if errs := q.Validate(field.NewPath("quota")); len(errs) > 0 {
			t.Fatalf("parseQuota(%q) = %+v, which is invalid: %v", s, q, errs)
		}
		again := fmt.Sprintf("google.com/tpu=%d", q.TPU)
		if q.Class != "" {
			again = string(q.Class) + ":" + again
		}
		if q2, err := parseQuota(again); err != nil || q2 != q {
			t.Fatalf("parseQuota(%q) = %+v; its own form %q reads %+v, %v", s, q, again, q2, err)
		}
	})
}
