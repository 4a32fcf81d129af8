package data_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
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

func flatten(runs []data.Run) []int {
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
		want     []data.Run
	}{
		// The repro: range(100, override_num_blocks=10), batch 16,
		// buffer 4: five batches of 16, then 10 rows mid-epoch.
		{"short batch mid-epoch", ten, 16, 4, true, []data.Run{{Batches: 5, Rows: 16}, {Batches: 1, Rows: 10}}},
		{"buffer 2B-2 keeps batches full", ten, 16, 30, true, []data.Run{{Batches: 6, Rows: 16}}},
		{"one block is the unshuffled epoch", []int{100}, 16, 4, false, []data.Run{{Batches: 6, Rows: 16}, {Batches: 1, Rows: 4}}},
		{"empty blocks are skipped", []int{0, 10, 0, 10}, 4, 1, false, []data.Run{{Batches: 5, Rows: 4}}},
		{"no rows", nil, 4, 1, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := data.ShuffledBatches(c.blocks, c.B, c.s, c.dropLast)
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
		got := flatten(data.ShuffledBatches(blocks, B, s, drop))
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
		b      data.Batching
		want   []data.HostBatches
	}{
		{"drop raises on the short batch", [][]int{ten}, data.Batching{BatchSize: 16, Devices: 4, Policy: data.Drop{}, LocalShuffleBufferSize: 4},
			[]data.HostBatches{{Rows: 100, Runs: []data.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: data.Raises, AtBatch: 5, Error: errLocal}}},
		{"raise raises on the short batch", [][]int{ten}, data.Batching{BatchSize: 16, Devices: 4, LocalShuffleBufferSize: 4},
			[]data.HostBatches{{Rows: 100, Runs: []data.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: data.Raises, AtBatch: 5, Error: errLocal}}},
		{"pad pads it", [][]int{ten}, data.Batching{BatchSize: 16, Devices: 4, Policy: data.Pad{}, LocalShuffleBufferSize: 4},
			[]data.HostBatches{{Rows: 100, Runs: []data.Run{{5, 16, 0}, {2, 10, 6}}, Batches: 7, RowsYielded: 100, PadRows: 12, Outcome: data.Completes}}},
		{"one device takes it", [][]int{ten}, data.Batching{BatchSize: 16, Devices: 1, Policy: data.Drop{}, LocalShuffleBufferSize: 4},
			[]data.HostBatches{{Rows: 100, Runs: []data.Run{{5, 16, 0}, {1, 10, 0}}, Batches: 6, RowsYielded: 90, RowsDropped: 10, Outcome: data.Completes}}},
		{"sync: hosts whose short batches differ raise", [][]int{ten, {100}}, data.Batching{BatchSize: 16, Devices: 1, Policy: data.Drop{}, Sync: true, Lookahead: 1, LocalShuffleBufferSize: 4},
			[]data.HostBatches{
				{Rows: 100, Runs: []data.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: data.Raises, AtBatch: 5,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 10 to 16. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."},
				{Rows: 100, Runs: []data.Run{{5, 16, 0}}, Batches: 5, RowsYielded: 80, RowsDropped: 20, Outcome: data.Raises, AtBatch: 5,
					Error: "Uneven batch sizes detected across JAX workers. Host batch sizes range from 10 to 16. To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`."}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, data.ModelBlocks(c.blocks, c.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Predict on the three defects of the issue: a local shuffle's short
// mid-epoch batch, the Drop share of a dataset every worker reads, and the
// device count named as configured.
func TestPredictShuffleAndUnsplit(t *testing.T) {
	t.Parallel()
	p := field.NewPath("iter")
	cases := []struct {
		name    string
		ds      data.Dataset
		it      data.IterJaxBatches
		hosts   data.Hosts
		errPath string // "" for no error
		errHas  string
		fails   bool
		mayFail bool
		bounded bool
		dropped int
		finding string // a finding's message contains this
	}{
		{name: "known blocks: certain to fail", ds: data.From(data.Range{N: 100, OverrideNumBlocks: 10}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4},
			hosts: data.Hosts{Workers: 1, LocalDevices: 4, NotSplit: true}, errPath: "iter.localShuffleBufferSize", errHas: "The local batch size (10)", fails: true, dropped: 20},
		{name: "known blocks: allowed", ds: data.From(data.Range{N: 100, OverrideNumBlocks: 10}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4, AllowRaise: true},
			hosts: data.Hosts{Workers: 1, LocalDevices: 4, NotSplit: true}, fails: true, dropped: 20, finding: "allowed by allowRaise"},
		{name: "big buffer: exact, unshuffled", ds: data.From(data.Range{N: 100, OverrideNumBlocks: 10}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 30, MaxDropFraction: 0.01},
			hosts: data.Hosts{Workers: 1, LocalDevices: 4, NotSplit: true}, dropped: 4, finding: "Drop discards 4 of 100 rows per host"},
		{name: "split: bounds", ds: data.From(data.Range{N: 1000}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4},
			hosts: data.Hosts{Workers: 4, LocalDevices: 4}, mayFail: true, bounded: true, dropped: 40, finding: "bounds, not a certainty"},
		{name: "Ray's blocks: bounds", ds: data.From(data.Range{N: 1000}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Pad{}, LocalShuffleBufferSize: 4},
			hosts: data.Hosts{Workers: 2, LocalDevices: 4, NotSplit: true}, bounded: true, finding: "set overrideNumBlocks"},
		{name: "too few rows for a short batch: exact", ds: data.From(data.Range{N: 40}),
			it:    data.IterJaxBatches{BatchSize: 16, Ragged: data.Drop{}, LocalShuffleBufferSize: 4},
			hosts: data.Hosts{Workers: 1, LocalDevices: 4, NotSplit: true}, dropped: 8, finding: "Drop discards 8 of 40 rows per host"},
		{name: "unsplit drop share is per host", ds: data.From(data.Range{N: 103}),
			it:    data.IterJaxBatches{BatchSize: 10, Ragged: data.Drop{}, MaxDropFraction: 0.02},
			hosts: data.Hosts{Workers: 4, NotSplit: true}, dropped: 3, finding: "Drop discards 3 of 103 rows per host per epoch (2.9%"},
		{name: "split drop share sums the hosts", ds: data.From(data.Range{N: 103}),
			it:    data.IterJaxBatches{BatchSize: 10, Ragged: data.Drop{}},
			hosts: data.Hosts{Workers: 4}, dropped: 3 + 4*5, finding: "Drop discards 23 of 103 rows per epoch"},
		{name: "CPU localDevices named", ds: data.From(data.Range{N: 100}), it: data.IterJaxBatches{BatchSize: 10},
			hosts: data.Hosts{Workers: 2, LocalDevices: 4}, errPath: "iter.batchSize", errHas: "(localDevices: 4 on each CPU worker)"},
		{name: "TPU localDevices named", ds: data.From(data.Range{N: 100}), it: data.IterJaxBatches{BatchSize: 10},
			hosts: data.Hosts{Workers: 2, Accelerator: "v4", LocalDevices: 8}, errPath: "iter.batchSize", errHas: "(localDevices: 8 on each v4 host, in place of its 4)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pr, err := data.Predict(p, c.ds, c.it, c.hosts)
			if c.errPath != "" {
				es := field.Errors(err)
				if len(es) != 1 || es[0].Field != c.errPath || es[0].Type != field.TypeInvalid || !strings.Contains(es[0].Detail, c.errHas) {
					t.Fatalf("error %v, want Invalid at %s with %q", err, c.errPath, c.errHas)
				}
				if pr == nil {
					return
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if pr.Fails != c.fails || pr.MayFail != c.mayFail || (pr.Groups[0].Bounds != nil) != c.bounded || pr.RowsDropped != c.dropped {
				t.Errorf("fails %v mayFail %v bounded %v dropped %d, want %v %v %v %d", pr.Fails, pr.MayFail, pr.Groups[0].Bounds != nil, pr.RowsDropped, c.fails, c.mayFail, c.bounded, c.dropped)
			}
			if c.finding != "" && !slices.ContainsFunc(pr.Findings, func(f placement.Finding) bool { return strings.Contains(f.Message, c.finding) }) {
				t.Errorf("no finding with %q in %v", c.finding, pr.Findings)
			}
		})
	}
}
