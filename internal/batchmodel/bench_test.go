package batchmodel_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/batchmodel"
)

// BenchmarkModelUneven models 256 hosts whose shards all differ (10 million
// rows in total) with batch synchronisation on.
func BenchmarkModelUneven(b *testing.B) {
	shards := make([]int, 256)
	for i := range shards {
		shards[i] = 10_000_000/256 + i*7
	}
	for name, pol := range map[string]batchmodel.Policy{"Drop": batchmodel.Drop, "Pad": batchmodel.Pad, "Raise": batchmodel.Raise} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out := batchmodel.Epochs(shards, batchmodel.Batching{BatchSize: 512, Devices: 4, Policy: pol, Sync: true, Lookahead: 1})
				if len(out) != 256 {
					b.Fatal(len(out))
				}
			}
		})
	}
}
