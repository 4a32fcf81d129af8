package data_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

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

// The epoch real Ray 2.60 gave for a range of 100 rows in 10 blocks read
// by one worker on a v6e host of 4 chips, batch 16, local shuffle buffer
// 4 (raised to 16): the shuffling batcher hands out five batches of 16,
// then 10 rows before the last block's rows are shuffled in (its compacted
// buffer holds 10 rows, over the yield threshold of 8, when the tenth block
// comes), which 4 devices cannot split. Whether the dataset is split over
// the one worker or read whole, it gets the same ten blocks, so Predict is
// exact either way.
func TestPredictShuffleOneWorker(t *testing.T) {
	t.Parallel()
	errLocal := "The local batch size (10) must be evenly divisible by the number of local JAX devices (4) on this host. To safely truncate or pad the batch, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."
	raised := data.HostBatches{Rows: 100, Runs: []data.Run{{Batches: 5, Rows: 16}}, Batches: 5, RowsYielded: 80, RowsDropped: 20,
		Outcome: data.Raises, AtBatch: 5, Error: errLocal}
	cases := []struct {
		ragged data.RaggedPolicy
		want   data.HostBatches
	}{
		{data.Drop{}, raised},
		{data.Raise{}, raised},
		{data.Pad{Value: -1}, data.HostBatches{Rows: 100, Runs: []data.Run{{Batches: 5, Rows: 16}, {Batches: 2, Rows: 10, Pad: 6}}, Batches: 7,
			RowsYielded: 100, PadRows: 12, Outcome: data.Completes}},
	}
	for _, notSplit := range []bool{false, true} {
		for _, c := range cases {
			hosts := data.Hosts{Workers: 1, Accelerator: "v6e", ChipsPerHost: 4, NotSplit: notSplit}
			it := data.IterJaxBatches{BatchSize: 16, Ragged: c.ragged, LocalShuffleBufferSize: 4, AllowRaise: true}
			pr, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 100, OverrideNumBlocks: 10}), it, hosts)
			if err != nil {
				t.Fatalf("%s notSplit %v: %v", data.Describe(c.ragged), notSplit, err)
			}
			g := pr.Groups[0]
			if g.Bounds != nil || pr.Devices != 4 {
				t.Errorf("%s notSplit %v: bounds %+v, %d devices; want exact over 4", data.Describe(c.ragged), notSplit, g.Bounds, pr.Devices)
			}
			if diff := cmp.Diff(c.want, g.Batches); diff != "" {
				t.Errorf("%s notSplit %v (-ray +predict):\n%s", data.Describe(c.ragged), notSplit, diff)
			}
			if pr.Fails != (c.want.Outcome != data.Completes) {
				t.Errorf("%s notSplit %v: Fails %v", data.Describe(c.ragged), notSplit, pr.Fails)
			}
		}
	}
}
