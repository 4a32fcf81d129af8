package sim_test

import (
	"testing"

	"github.com/raytpu/raytpu/sim"
)

func TestBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want sim.Bytes
		str  string
	}{
		{"64Gi", 64 << 30, "64Gi"},
		{"1Ti", 1 << 40, "1Ti"},
		{"1536Mi", 1536 << 20, "1536Mi"},
		{"2G", 2e9, "1953125Ki"},
		{"4096", 4096, "4Ki"},
		{"1000", 1000, "1000"},
	}
	for _, tt := range tests {
		got, err := sim.ParseBytes(tt.in)
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseBytes(%q) = %v (%s), %v; want %d (%s)", tt.in, int64(got), got, err, tt.want, tt.str)
		}
	}
	for _, bad := range []string{"", "Gi", "-1", "1.5Gi", "99999999999Ti"} {
		if _, err := sim.ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", bad)
		}
	}
}
