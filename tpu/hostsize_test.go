package tpu_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

func TestCheckChipsPerHost(t *testing.T) {
	t.Parallel()
	p := field.NewPath("trainer", "scaling", "chipsPerHost")
	cases := []struct {
		gen, topo string
		n         int
		want      field.Type // "" for no error
	}{
		{"v6e", "2x4", 4, ""},
		{"v6e", "2x4", 8, ""},
		{"v6e", "2x2", 8, field.TypeInvalid},       // 4 chips on an 8-chip host
		{"v4", "2x2x2", 8, field.TypeNotSupported}, // v4 hosts carry 4
		{"v7x", "2x2x1", 1, ""},
		{"v5e", "4x4", 0, field.TypeInvalid},
		{"v5e", "4x4", -4, field.TypeInvalid},
	}
	for _, c := range cases {
		t.Run(c.gen+"-"+c.topo, func(t *testing.T) {
			t.Parallel()
			g := mustGen(t, c.gen)
			e := g.CheckChipsPerHost(tpu.MustParseTopology(c.topo), c.n, p)
			switch {
			case c.want == "" && e != nil:
				t.Errorf("CheckChipsPerHost(%d) = %v, want nil", c.n, e)
			case c.want != "" && (e == nil || e.Type != c.want || e.Field != p.String()):
				t.Errorf("CheckChipsPerHost(%d) = %v, want %s at %s", c.n, e, c.want, p)
			}
		})
	}
}
