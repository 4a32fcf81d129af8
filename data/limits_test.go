package data_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
)

// TestHugeDataLimit: a batch size, row count, worker count, prefetch
// depth, shuffle buffer, concurrency or actor pool size past its limit is
// a TooMany error at its path, and the check allocates little.
// Not parallel: it measures the heap.
func TestHugeDataLimit(t *testing.T) {
	p := field.NewPath("iter")
	small := data.From(data.Range{N: 1000})
	for _, n := range []int{1 << 40, 99999999999, math.MaxInt} {
		cases := []struct {
			name string
			run  func() error
			want []field.Ref
		}{
			{"iter batchSize", func() error {
				_, errs := data.Predict(p, small, data.IterJaxBatches{BatchSize: n}, data.Hosts{Workers: 1})
				return errs.Err()
			}, []field.Ref{{Field: "iter.batchSize", Type: field.TypeTooMany}}},
			{"workers", func() error {
				_, errs := data.Predict(p, small, data.IterJaxBatches{}, data.Hosts{Workers: n})
				return errs.Err()
			}, []field.Ref{{Field: "iter.workers", Type: field.TypeTooMany}}},
			// 2^40 and 99999999999 rows are allowed: the row counts are
			// those with 2^50 set.
			{"range rows", func() error {
				_, errs := data.Predict(p, data.From(data.Range{N: n | 1<<50}), data.IterJaxBatches{}, data.Hosts{Workers: 1})
				return errs.Err()
			}, []field.Ref{{Field: "iter.dataset.source.n", Type: field.TypeTooMany}}},
			{"prefetch batches", func() error {
				_, errs := data.Predict(p, small, data.IterJaxBatches{PrefetchBatches: n}, data.Hosts{Workers: 1})
				return errs.Err()
			}, []field.Ref{{Field: "iter.prefetchBatches", Type: field.TypeTooMany}}},
			// 2^40 and 99999999999 rows of buffer are allowed, as rows are.
			{"local shuffle buffer", func() error {
				_, errs := data.Predict(p, small, data.IterJaxBatches{LocalShuffleBufferSize: n | 1<<50}, data.Hosts{Workers: 1})
				return errs.Err()
			}, []field.Ref{{Field: "iter.localShuffleBufferSize", Type: field.TypeTooMany}}},
			{"map_batches concurrency", func() error {
				ds := small.MapBatches(data.MapBatches{Fn: "m:f", Concurrency: n}).Write(data.WriteJSON{Path: "/tmp/out"})
				_, err := data.Pipeline{Name: "p", Dataset: ds}.Compile()
				return err
			}, []field.Ref{{Field: "pipeline.dataset.steps[0].concurrency", Type: field.TypeTooMany}}},
			{"actor pool size", func() error {
				ds := small.MapBatches(data.MapBatches{Fn: "m:f", ActorPool: &data.ActorPool{MinSize: 1, MaxSize: n}}).Write(data.WriteJSON{Path: "/tmp/out"})
				_, err := data.Pipeline{Name: "p", Dataset: ds}.Compile()
				return err
			}, []field.Ref{{Field: "pipeline.dataset.steps[0].actorPool.maxSize", Type: field.TypeTooMany}}},
			{"map_batches batchSize", func() error {
				ds := small.MapBatches(data.MapBatches{Fn: "m:f", BatchSize: n}).Write(data.WriteJSON{Path: "/tmp/out"})
				_, err := data.Pipeline{Name: "p", Dataset: ds}.Compile()
				return err
			}, []field.Ref{{Field: "pipeline.dataset.steps[0].batchSize", Type: field.TypeTooMany}}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var err error
				alloctest.Below(t, alloctest.MiB, func() { err = c.run() })
				if diff := cmp.Diff(c.want, field.Refs(err)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
				}
			})
		}
	}
}
