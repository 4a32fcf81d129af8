package batchmodel_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/batchmodel"
)

// Hand-worked cases of Ray 2.60's jax_util: each expectation was derived by
// stepping through _yield_batches_no_sync / _yield_batches_with_sync.
func TestModelBatches(t *testing.T) {
	t.Parallel()
	ok := batchmodel.Completes
	cases := []struct {
		name   string
		shards []int
		b      batchmodel.Batching
		want   []batchmodel.HostBatches
	}{
		{"local raise divisible last", []int{10}, batchmodel.Batching{BatchSize: 4, Devices: 2},
			[]batchmodel.HostBatches{{Rows: 10, Runs: []batchmodel.Run{{2, 4, 0}, {1, 2, 0}}, Batches: 3, RowsYielded: 10, Outcome: ok}}},
		{"local raise indivisible last", []int{9}, batchmodel.Batching{BatchSize: 4, Devices: 2},
			[]batchmodel.HostBatches{{Rows: 9, Runs: []batchmodel.Run{{2, 4, 0}}, Batches: 2, RowsYielded: 8, RowsDropped: 1, Outcome: batchmodel.Raises, AtBatch: 2,
				Error: "The local batch size (1) must be evenly divisible by the number of local JAX devices (2) on this host. To safely truncate or pad the batch, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."}}},
		{"local drop", []int{9}, batchmodel.Batching{BatchSize: 4, Devices: 2, Policy: batchmodel.Drop},
			[]batchmodel.HostBatches{{Rows: 9, Runs: []batchmodel.Run{{2, 4, 0}}, Batches: 2, RowsYielded: 8, RowsDropped: 1, Outcome: ok}}},
		{"local pad", []int{9}, batchmodel.Batching{BatchSize: 4, Devices: 2, Policy: batchmodel.Pad},
			[]batchmodel.HostBatches{{Rows: 9, Runs: []batchmodel.Run{{2, 4, 0}, {1, 1, 3}}, Batches: 3, RowsYielded: 9, PadRows: 3, Outcome: ok}}},
		{"local empty", []int{0}, batchmodel.Batching{BatchSize: 4, Devices: 2},
			[]batchmodel.HostBatches{{Rows: 0, Outcome: ok}}},
		{"sync drop stops at the shortest host", []int{9, 17}, batchmodel.Batching{BatchSize: 4, Devices: 1, Policy: batchmodel.Drop, Sync: true, Lookahead: 1},
			[]batchmodel.HostBatches{
				{Rows: 9, Runs: []batchmodel.Run{{2, 4, 0}}, Batches: 2, RowsYielded: 8, RowsDropped: 1, Outcome: ok},
				{Rows: 17, Runs: []batchmodel.Run{{2, 4, 0}}, Batches: 2, RowsYielded: 8, RowsDropped: 9, Outcome: ok}}},
		{"sync pad with dummies", []int{5, 12}, batchmodel.Batching{BatchSize: 4, Devices: 1, Policy: batchmodel.Pad, Sync: true, Lookahead: 2},
			[]batchmodel.HostBatches{
				{Rows: 5, Runs: []batchmodel.Run{{1, 4, 0}, {1, 1, 3}, {1, 0, 4}}, Batches: 3, RowsYielded: 5, PadRows: 7, Outcome: ok},
				{Rows: 12, Runs: []batchmodel.Run{{3, 4, 0}}, Batches: 3, RowsYielded: 12, Outcome: ok}}},
		{"sync raise uneven sizes", []int{6, 8}, batchmodel.Batching{BatchSize: 4, Devices: 1, Sync: true, Lookahead: 1},
			[]batchmodel.HostBatches{
				{Rows: 6, Runs: []batchmodel.Run{{1, 4, 0}}, Batches: 1, RowsYielded: 4, RowsDropped: 2, Outcome: batchmodel.Raises, AtBatch: 1,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 2 to 4. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."},
				{Rows: 8, Runs: []batchmodel.Run{{1, 4, 0}}, Batches: 1, RowsYielded: 4, RowsDropped: 4, Outcome: batchmodel.Raises, AtBatch: 1,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 2 to 4. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."}}},
		{"sync raise uneven count", []int{4, 8}, batchmodel.Batching{BatchSize: 4, Devices: 1, Sync: true, Lookahead: 1},
			[]batchmodel.HostBatches{
				{Rows: 4, Runs: []batchmodel.Run{{1, 4, 0}}, Batches: 1, RowsYielded: 4, Outcome: batchmodel.Raises, AtBatch: 1,
					Error: "Uneven number of batches detected across JAX workers. To safely drop orphaned batches without hanging, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."},
				{Rows: 8, Runs: []batchmodel.Run{{1, 4, 0}}, Batches: 1, RowsYielded: 4, RowsDropped: 4, Outcome: batchmodel.Raises, AtBatch: 1,
					Error: "Uneven number of batches detected across JAX workers. To safely drop orphaned batches without hanging, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."}}},
		{"sync pad empty host", []int{0, 8}, batchmodel.Batching{BatchSize: 4, Devices: 1, Policy: batchmodel.Pad, Sync: true, Lookahead: 1},
			[]batchmodel.HostBatches{
				{Rows: 0, Outcome: batchmodel.Raises, Error: "Cannot create dummy batches for synchronization because this JAX host has not received any data batches to use as a template. This usually happens if one JAX host's dataset shard is completely empty while others have data. Ensure that all JAX hosts have at least one batch of data, or use `drop_last=True` to avoid yielding dummy batches."},
				{Rows: 8, Runs: []batchmodel.Run{{1, 4, 0}}, Batches: 1, RowsYielded: 4, RowsDropped: 4, Outcome: batchmodel.Blocks, AtBatch: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := batchmodel.Epochs(c.shards, c.b)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
