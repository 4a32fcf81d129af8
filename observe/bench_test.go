package observe_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/raytpu/raytpu/observe"
)

// BenchmarkParseGroup256Hosts parses and groups the exports of 256 hosts
// of 4 chips (64 slices of 4 hosts), every host's export the capture of a
// real Ray node: the CPU cost of one TPUMetrics reading without the
// network, done serially.
func BenchmarkParseGroup256Hosts(b *testing.B) {
	text := readCapture(b)
	const hosts = 256
	nodes := make([]observe.NodeExport, hosts)
	for i := range nodes {
		nodes[i].Node = node("n"+strconv.Itoa(i), "10.0."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250),
			"slice-"+strconv.Itoa(i/4), strconv.Itoa(i%4), "v4-32", "2x2x4")
	}
	b.SetBytes(int64(len(text) * hosts))
	b.ReportAllocs()
	for b.Loop() {
		for i := range nodes {
			exp, err := observe.ParseExport(bytes.NewReader(text))
			if err != nil {
				b.Fatal(err)
			}
			nodes[i].Export = exp
		}
		m := observe.Group(nodes)
		if len(m.Slices) != hosts/4 || m.Slices[0].Chips() != 16 {
			b.Fatalf("grouped %d slices, %d chips in the first; want 64 and 16", len(m.Slices), m.Slices[0].Chips())
		}
	}
}

// BenchmarkParseExport is one node's export.
func BenchmarkParseExport(b *testing.B) {
	text := readCapture(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		exp, err := observe.ParseExport(bytes.NewReader(text))
		if err != nil || len(exp.Chips) != 4 {
			b.Fatalf("ParseExport: %d chips, %v", len(exp.Chips), err)
		}
	}
}

// BenchmarkExpfmtWholeExport parses one node's whole export with expfmt,
// without ParseExport's filter on the ray_tpu_ families: what the filter
// saves.
func BenchmarkExpfmtWholeExport(b *testing.B) {
	text := readCapture(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil || fams[observe.GaugeDutyCycle] == nil {
			b.Fatalf("parse: %v", err)
		}
	}
}
