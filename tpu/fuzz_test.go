package tpu_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

func FuzzParseTopology(f *testing.F) {
	for _, s := range []string{
		"4x4", "2x2x1", " 4X4 ", "16x16", "8x16x16", "1x1x1", "04x4",
		"", "x", "4x", "x4", "0x4", "-1x4", "+4x4", "4x4x4x4", "4 x 4", "65536x1", "65537x1",
		"99999999999999999999x1", "４x4", "4xx4", "1.5x2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		topo, err := tpu.ParseTopology(s)
		if err != nil {
			if !topo.IsZero() {
				t.Fatalf("ParseTopology(%q) returned %v with error %v", s, topo, err)
			}
			return
		}
		if r := topo.Rank(); r != 2 && r != 3 {
			t.Fatalf("ParseTopology(%q) rank %d", s, r)
		}
		chips := 1
		for _, d := range topo.Dims() {
			if d <= 0 {
				t.Fatalf("ParseTopology(%q) has dimension %d", s, d)
			}
			chips *= d
		}
		if chips != topo.Chips() {
			t.Fatalf("ParseTopology(%q): Chips() = %d, product of Dims() = %d", s, topo.Chips(), chips)
		}
		again, err := tpu.ParseTopology(topo.String())
		if err != nil {
			t.Fatalf("ParseTopology(%q).String() = %q does not parse: %v", s, topo.String(), err)
		}
		if again != topo || again.String() != topo.String() {
			t.Fatalf("round trip of %q: %v != %v", s, again, topo)
		}
		text, _ := topo.MarshalText()
		var fromText tpu.Topology
		if err := fromText.UnmarshalText(text); err != nil || fromText != topo {
			t.Fatalf("text round trip of %q: %v, %v", s, fromText, err)
		}
	})
}

func FuzzResolve(f *testing.F) {
	f.Add("v6e", "4x4", 0, "", uint8(0))
	f.Add("v6e", "2x4", 4, "", uint8(1))
	f.Add("v5litepod", "2x4", 0, "ct5lp-hightpu-8t", uint8(2))
	f.Add("TPU-V4", "8x16x16", 0, "", uint8(0))
	f.Add("v5p", "16x4x4", 0, "", uint8(1))
	f.Add("tpu7x", "1x1x1", 1, "tpu7x-standard-1t", uint8(1))
	f.Add("v7x", "4x4x12", 1, "", uint8(2))
	f.Add("v2", "2x2", 0, "x", uint8(1))
	f.Add("v6x", "4x", -1, "", uint8(0))
	f.Add("", "", 0, "", uint8(2))
	f.Add("ironwood", "16x24x24", 4, "tpu7x-ultranet-4t", uint8(2))
	targets := []tpu.Target{tpu.TargetRay, tpu.TargetGKE, tpu.TargetAny}
	fields := tpu.FieldsUnder(field.NewPath("slice"))
	f.Fuzz(func(t *testing.T, gen, topo string, cph int, machine string, target uint8) {
		tg := targets[int(target)%len(targets)]
		spec := tpu.SliceSpec{Generation: gen, Topology: topo, ChipsPerHost: cph, MachineType: machine}
		sl, errs := spec.Resolve(tg, fields)
		if (sl == nil) == (errs == nil) {
			t.Fatalf("Resolve(%+v, %q) = %v, %v: want exactly one of slice and errors", spec, tg, sl, errs)
		}
		for _, e := range errs {
			if e == nil || e.Field == "" || e.Type == "" {
				t.Fatalf("Resolve(%+v, %q): malformed error %#v", spec, tg, e)
			}
			_ = e.Error()
		}
		if sl == nil {
			return
		}
		if sl.ChipsPerHost <= 0 || sl.Hosts()*sl.ChipsPerHost != sl.Chips() {
			t.Fatalf("Resolve(%+v, %q): %d hosts x %d chips != %d chips", spec, tg, sl.Hosts(), sl.ChipsPerHost, sl.Chips())
		}
		if sl.MultiHost() != (sl.Hosts() > 1) {
			t.Fatalf("Resolve(%+v, %q): MultiHost %v with %d hosts", spec, tg, sl.MultiHost(), sl.Hosts())
		}
		switch tg {
		case tpu.TargetRay:
			if !sl.RayValid {
				t.Fatalf("Resolve(%+v, Ray) returned a slice Ray rejects: %s", spec, sl.RayReason)
			}
		case tpu.TargetGKE:
			if !sl.GKEValid {
				t.Fatalf("Resolve(%+v, GKE) returned a slice GKE rejects: %s", spec, sl.GKEReason)
			}
		default:
			if !sl.RayValid && !sl.GKEValid {
				t.Fatalf("Resolve(%+v, Any) returned a slice both reject: %s; %s", spec, sl.RayReason, sl.GKEReason)
			}
		}
		_, _, _, _ = sl.PodType(), sl.GCEAcceleratorType(), sl.GKENodeSelector(), sl.Devices()
	})
}
