package data_test

import (
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
)

// BenchmarkPredict predicts 10 million rows over 256 v5p hosts: arithmetic,
// so the cost does not grow with rows or batches.
func BenchmarkPredict(b *testing.B) {
	ds := data.From(data.Range{N: 10_000_000})
	p := field.NewPath("iter")
	for _, c := range []struct {
		name string
		it   data.IterJaxBatches
	}{
		{"pad-sync", data.IterJaxBatches{BatchSize: 512, Ragged: data.Pad{Value: -1}, SynchronizeBatches: true}},
		{"drop", data.IterJaxBatches{BatchSize: 512, Ragged: data.Drop{}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pr, err := data.Predict(p, ds, c.it, data.Hosts{Workers: 256, Accelerator: "v5p"})
				if err != nil || pr.Groups[0].Hosts != 256 {
					b.Fatal(err)
				}
			}
		})
	}
}
