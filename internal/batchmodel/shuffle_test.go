package batchmodel_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/internal/batchmodel"
)

// refShuffled steps Ray 2.60's _BatchingIterator over a ShufflingBatcher
// batch by batch, as written in batcher.py, for comparison with the
// model's run-at-a-time arithmetic.
func refShuffled(blocks []int, B, s int, dropLast bool) []int {
	sp := max(s, B)
	Y, C := max(1, sp/2), sp*3/2
	c, u := 0, 0
	var out []int
	hasBatch := func(done bool) bool {
		n := c + u
		if done {
			return n >= B
		}
		return n >= B && (c >= Y || n-B >= C)
	}
	next := func(done bool) {
		if u > 0 && (done || c <= Y) {
			c, u = c+u, 0
		}
		k := min(B, c)
		c -= k
		out = append(out, k)
	}
	for _, n := range blocks {
		u += max(n, 0)
		for hasBatch(false) {
			next(false)
		}
	}
	for hasBatch(true) {
		next(true)
	}
	if c+u > 0 && !dropLast {
		next(true)
	}
	return out
}

func flatten(runs []batchmodel.Run) []int {
	var out []int
	for _, r := range runs {
		for range r.Batches {
			out = append(out, r.Rows)
		}
	}
	return out
}

func TestShuffledBatches(t *testing.T) {
	t.Parallel()
	ten := slices.Repeat([]int{10}, 10)
	cases := []struct {
		name     string
		blocks   []int
		B, s     int
		dropLast bool
		want     []batchmodel.Run
	}{
		// The repro: range(100, override_num_blocks=10), batch 16,
		// buffer 4: five batches of 16, then 10 rows mid-epoch.
		{"short batch mid-epoch", ten, 16, 4, true, []batchmodel.Run{{Batches: 5, Rows: 16}, {Batches: 1, Rows: 10}}},
		{"buffer 2B-2 keeps batches full", ten, 16, 30, true, []batchmodel.Run{{Batches: 6, Rows: 16}}},
		{"one block is the unshuffled epoch", []int{100}, 16, 4, false, []batchmodel.Run{{Batches: 6, Rows: 16}, {Batches: 1, Rows: 4}}},
		{"empty blocks are skipped", []int{0, 10, 0, 10}, 4, 1, false, []batchmodel.Run{{Batches: 5, Rows: 4}}},
		{"no rows", nil, 4, 1, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := batchmodel.Shuffled(c.blocks, c.B, c.s, c.dropLast)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The run-at-a-time model agrees with a batch-at-a-time transcription of
// Ray's code on random block layouts, and never yields a short batch before
// the end with a buffer of at least MinLocalShuffleBuffer.
func TestShuffledBatchesMatchesStepping(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		B := 1 + r.IntN(40)
		s := r.IntN(4 * B)
		blocks := make([]int, r.IntN(30))
		for i := range blocks {
			blocks[i] = r.IntN(3 * B)
		}
		drop := r.IntN(2) == 0
		got := flatten(batchmodel.Shuffled(blocks, B, s, drop))
		if want := refShuffled(blocks, B, s, drop); !slices.Equal(got, want) {
			t.Fatalf("blocks %v B %d s %d drop %v: model %v, stepping %v", blocks, B, s, drop, got, want)
		}
		if s >= data.MinLocalShuffleBuffer(B) {
			for i, n := range got {
				if n < B && i < len(got)-1 {
					t.Fatalf("blocks %v B %d s %d: short batch %d at %d with a buffer of 2B-2", blocks, B, s, n, i)
				}
			}
		}
	}
}

func TestModelBlocksShuffle(t *testing.T) {
	t.Parallel()
	ten := slices.Repeat([]int{10}, 10)
	errLocal := "The local batch size (10) must be evenly divisible by the number of local JAX devices (4) on this host. To safely truncate or pad the batch, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."
	cases := []struct {
		name   string
		blocks [][]int
		b      batchmodel.Batching
		want   []batchmodel.HostBatches
	}{
		// Real Ray 2.60 on range(100, override_num_blocks=10) read by one
		// worker of 4 devices, batch 16, buffer 4, Drop: five batches of
		// 16, then ValueError on the 10 rows the batcher hands out when
		// the tenth block comes (its compacted buffer holds 10 rows, over
		// the yield threshold of 8, so it does not shuffle the block in).
		{"drop raises on the short batch", [][]int{ten}, batchmodel.Batching{BatchSize: 16, Devices: 4, Policy: batchmodel.Drop, LocalShuffleBufferSize: 4},
			[]batchmodel.HostBatches{{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: batchmodel.Raises, AtBatch: 5, Error: errLocal}}},
		{"raise raises on the short batch", [][]int{ten}, batchmodel.Batching{BatchSize: 16, Devices: 4, LocalShuffleBufferSize: 4},
			[]batchmodel.HostBatches{{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: batchmodel.Raises, AtBatch: 5, Error: errLocal}}},
		{"pad pads it", [][]int{ten}, batchmodel.Batching{BatchSize: 16, Devices: 4, Policy: batchmodel.Pad, LocalShuffleBufferSize: 4},
			[]batchmodel.HostBatches{{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}, {2, 10, 6}}, Batches: 7, RowsYielded: 100, PadRows: 12, Outcome: batchmodel.Completes}}},
		{"one device takes it", [][]int{ten}, batchmodel.Batching{BatchSize: 16, Devices: 1, Policy: batchmodel.Drop, LocalShuffleBufferSize: 4},
			[]batchmodel.HostBatches{{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}, {1, 10, 0}}, Batches: 6, RowsYielded: 90, RowsDropped: 10, Outcome: batchmodel.Completes}}},
		{"sync: hosts whose short batches differ raise", [][]int{ten, {100}}, batchmodel.Batching{BatchSize: 16, Devices: 1, Policy: batchmodel.Drop, Sync: true, Lookahead: 1, LocalShuffleBufferSize: 4},
			[]batchmodel.HostBatches{
				{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: batchmodel.Raises, AtBatch: 5,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 10 to 16. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."},
				{Rows: 100, Runs: []batchmodel.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: batchmodel.Raises, AtBatch: 5,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 10 to 16. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, batchmodel.EpochsOfBlocks(c.blocks, c.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
