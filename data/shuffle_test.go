package data_test

import (
	"slices"
	"strings"
	"testing"

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
