package cpubench_test

import (
	"testing"

	"github.com/raytpu/raytpu/bench/cpubench"
)

var sink []byte

func TestMeasureCountsWorkAndAllocations(t *testing.T) {
	calls := 0
	r := cpubench.Median(2, "alloc", func() {
		calls++
		sink = make([]byte, 64+calls%2) // one heap allocation a call
	})
	if r.Case != "alloc" {
		t.Errorf("Case = %q, want alloc", r.Case)
	}
	if r.CPUNsPerOp <= 0 || r.NsPerOp <= 0 {
		t.Errorf("times per op = %v CPU, %v wall; want both above 0", r.CPUNsPerOp, r.NsPerOp)
	}
	if r.AllocsPerOp != 1 || r.BytesPerOp < 64 {
		t.Errorf("allocs, bytes per op = %d, %d; want 1 and at least 64", r.AllocsPerOp, r.BytesPerOp)
	}
	if calls < 2*1000 {
		t.Errorf("f ran %d times over 2 runs; want at least the warm-ups", calls)
	}
}
