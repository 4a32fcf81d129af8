package observe_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// Nil and zero inputs and receivers answer with an error naming what to
// pass; nothing panics.
func TestNilInputs(t *testing.T) {
	if _, err := observe.ParseExport(nil); err == nil {
		t.Error("ParseExport(nil) succeeded")
	}
	if _, err := observe.ParseExport((*bytes.Buffer)(nil)); err == nil {
		t.Error("ParseExport((*bytes.Buffer)(nil)) succeeded")
	}
	if _, err := observe.NewReader(new(ray.Client)); err == nil || !strings.Contains(err.Error(), "ray.NewClient") {
		t.Errorf("NewReader(new(ray.Client)) = %v, want an error saying to use ray.NewClient", err)
	}
	for name, r := range map[string]*observe.Reader{"nil": nil, "zero": new(observe.Reader)} {
		if _, err := r.TPUMetrics(context.Background()); err == nil || !strings.Contains(err.Error(), "observe.NewReader") {
			t.Errorf("%s Reader: TPUMetrics = %v, want an error saying to use observe.NewReader", name, err)
		}
	}
}
