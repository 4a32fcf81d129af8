package servev1_test

import (
	"math"
	"testing"

	"github.com/raytpu/raytpu/serve/servev1"
)

// TestTensorTotal: nil, negative and overflowing inputs are errors, never
// panics.
func TestTensorTotal(t *testing.T) {
	t.Parallel()
	var nilT *servev1.Tensor
	if _, err := nilT.Float32s(); err == nil {
		t.Error("nil tensor: no error")
	}
	if _, err := (&servev1.Tensor{}).Float32s(); err == nil {
		t.Error("zero tensor: no error")
	}
	for _, shape := range [][]int64{{-1}, {1 << 62, 1 << 62}, {math.MaxInt64, 2}} {
		if _, err := servev1.Float32Tensor(nil, shape...); err == nil {
			t.Errorf("shape %v: no error", shape)
		}
	}
	if err := servev1.WritePython(""); err == nil {
		t.Error("WritePython(\"\"): no error")
	}
}
