package datamodel_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/batchmodel"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// gridCase is one generated iter_jax_batches case of the grid mode of
// crosscheck_ray.py.
type gridCase struct {
	Devices    int      `json:"devices"`
	Source     string   `json:"source"` // range or items
	Rows       int      `json:"rows"`
	Blocks     int      `json:"blocks"` // override_num_blocks; 0: Ray's choice
	Batch      int      `json:"batch"`  // 0: the default, 256
	Policy     string   `json:"policy"`
	PadColumns []string `json:"pad_columns,omitempty"`
	Shuffle    int      `json:"shuffle"` // local_shuffle_buffer_size; 0: none
	Seed       int      `json:"seed"`
	Split      int      `json:"split"` // streaming_split workers; 0: the whole dataset
	// Reuse: iterate one materialized copy of the dataset, shared with
	// the other reusing cases of the same source, rows and blocks (unsplit).
	Reuse   bool `json:"reuse,omitempty"`
	Workers int  `json:"-"` // hosts Predict is told of (unsplit)
}

// gridResult is a grid line: a hostResult plus the blocks Ray's batcher
// received (unsplit cases and splits over one worker).
type gridResult struct {
	hostResult
	Blocks []int `json:"blocks"`
}

// gridCases is the grid: randomCases, the issue's case (a local shuffle
// buffer of a quarter of the batch over ten blocks of 10 rows, which Ray
// ends with a short batch mid-epoch) read whole and split over one worker,
// and sweepCases.
func gridCases() []gridCase {
	issue := gridCase{Devices: 4, Source: "range", Rows: 100, Blocks: 10, Batch: 16, Policy: "Drop", Shuffle: 4, Seed: 50, Workers: 1}
	split := issue
	split.Split = 1
	cases := append(randomCases(), issue, split)
	return append(cases, sweepCases()...)
}

// sweepDatasets are the datasets of sweepCases: batch sizes of 6, 9 and 16
// rows over 2 to 4 devices, odd row counts, block counts that do not
// divide the rows (so the read's last block is shorter, or from_items'
// first ones longer), blocks of a few rows against a batch of 16, Ray's
// choice of blocks, and the issue's case: range(100) in 10 blocks, batch 16
// over 4 devices.
var sweepDatasets = []gridCase{
	{Devices: 4, Batch: 16, Source: "range", Rows: 100, Blocks: 10},
	{Devices: 4, Batch: 16, Source: "range", Rows: 203, Blocks: 9},
	{Devices: 4, Batch: 16, Source: "items", Rows: 149, Blocks: 37},
	{Devices: 4, Batch: 16, Source: "range", Rows: 151},
	{Devices: 3, Batch: 9, Source: "range", Rows: 95, Blocks: 8},
	{Devices: 3, Batch: 9, Source: "items", Rows: 77, Blocks: 6},
	{Devices: 2, Batch: 6, Source: "range", Rows: 61, Blocks: 4},
	{Devices: 2, Batch: 6, Source: "items", Rows: 47, Blocks: 5},
}

// sweepCases runs every local shuffle buffer from 1 to 2B rows under every
// ragged policy over each of sweepDatasets, read whole by one worker. The
// cases of a dataset iterate one materialized copy of it (Reuse): one read
// per dataset, not per case.
func sweepCases() []gridCase {
	var cases []gridCase
	for i, ds := range sweepDatasets {
		for s := 1; s <= 2*ds.Batch; s++ {
			for _, p := range []string{"Raise", "Drop", "Pad"} {
				c := ds
				c.Shuffle, c.Policy, c.Seed, c.Workers, c.Reuse = s, p, 1000*i+s, 1, true
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// randomCases generates cases with a fixed seed, by kind: local shuffle
// buffers around the batch size (none, 1, B/2, B-1, B, B+1, 3B/2, 2B-3,
// 2B-2, 2B), datasets every worker reads whole and a few split ones, block
// counts from Ray's choice to 40, 1 to 8 devices, the default batch size,
// and from_items with per-column paddings.
func randomCases() []gridCase {
	r := rand.New(rand.NewPCG(20, 2060))
	policies := []string{"Raise", "Drop", "Pad"}
	var cases []gridCase
	for i := range 176 {
		d := 1 + i%8
		c := gridCase{Devices: d, Source: "range", Policy: policies[(i/8)%3], Seed: i, Workers: 1 + r.IntN(4)}
		if r.IntN(4) == 0 {
			c.Source = "items"
		}
		B := d * (1 + r.IntN(6))
		if i%11 == 0 && 256%d == 0 {
			B = 256 // the default: batch_size not passed
		} else {
			c.Batch = B
		}
		buffers := []int{0, 1, B / 2, B - 1, B, B + 1, 3 * B / 2, 2*B - 3, 2*B - 2, 2 * B}
		c.Shuffle = max(buffers[r.IntN(len(buffers))], 0)
		if c.Shuffle == 0 && r.IntN(2) == 0 {
			c.Shuffle = 1 + r.IntN(B)
		}
		c.Rows = r.IntN(14 * B)
		if c.Source == "items" {
			c.Rows = min(c.Rows, 160)
			if c.Policy == "Pad" && r.IntN(2) == 0 {
				c.PadColumns = []string{"id", "x"}
			}
		}
		if r.IntN(6) > 0 {
			c.Blocks = 1 + r.IntN(40)
		}
		if i%40 == 7 {
			c.Split = 2 + r.IntN(2)
		}
		cases = append(cases, c)
	}
	return cases
}

func (c gridCase) dataset() data.Dataset {
	if c.Source == "items" {
		items := make([]any, c.Rows)
		for i := range items {
			items[i] = map[string]any{"id": i, "x": float64(i) / 2}
		}
		return data.From(data.FromItems{Items: items, OverrideNumBlocks: c.Blocks})
	}
	return data.From(data.Range{N: c.Rows, OverrideNumBlocks: c.Blocks})
}

func (c gridCase) policy() data.RaggedPolicy {
	if c.Policy == "Pad" && len(c.PadColumns) > 0 {
		cols := map[string]float64{}
		for _, k := range c.PadColumns {
			cols[k] = -1
		}
		return data.Pad{Columns: cols}
	}
	return policy(c.Policy)
}

// within reports why Ray's epoch lies outside the bounds, or "".
func within(b *data.Bounds, got hostResult, rows, batchSize int) string {
	var yielded, pad int
	for _, x := range got.Batches {
		yielded += x[0]
		pad += x[1]
	}
	in := func(v int, r [2]int) bool { return v >= r[0] && v <= r[1] }
	switch {
	case !slices.Contains(b.Outcomes, data.Outcome(got.Outcome)):
		return "outcome " + got.Outcome
	case !in(len(got.Batches), b.Batches):
		return fmt.Sprintf("%d batches", len(got.Batches))
	case !in(rows-yielded, b.RowsDropped):
		return fmt.Sprintf("%d rows dropped", rows-yielded)
	case !in(pad, b.PadRows):
		return fmt.Sprintf("%d padding rows", pad)
	}
	for i, x := range got.Batches {
		if i < len(got.Batches)-1 && x[0] < batchSize && x[0] > 0 && !in(x[0], b.ShortBatch) {
			return fmt.Sprintf("a short batch of %d rows", x[0])
		}
	}
	return ""
}

// TestCrossCheckGrid runs the generated grid on real Ray Data and JAX (the
// package's one local Ray instance; one Ray task per device count) and
// checks, for every case and host, Predict against Ray: equal batches and
// outcome when Predict is exact, inside the bounds when it bounds. For
// datasets read whole or split over one worker, it also runs the model on
// the blocks Ray's batcher received and requires the same batches exactly,
// so every such shuffle case checks the batcher model itself, whatever
// order the blocks came in. The grid must hold the issue's kind: a case
// where Ray hands out a short batch before the end of the epoch and
// raises on it under Drop.
func TestCrossCheckGrid(t *testing.T) {
	py := venvtest.Python(t)
	cases := gridCases()
	lines, err := runGrid(t, py, cases)
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]int]gridResult{}
	for _, r := range lines {
		got[[2]int{r.Case, r.Host}] = r
	}
	agree, bounded, shuffled, midShort, midShortDropRaises := 0, 0, 0, 0, 0
	for i, c := range cases {
		if c.Shuffle > 0 {
			shuffled++
		}
		hosts := data.Hosts{Workers: c.Workers, LocalDevices: c.Devices, NotSplit: true}
		if c.Split > 0 {
			hosts = data.Hosts{Workers: c.Split, LocalDevices: c.Devices}
		}
		it := data.IterJaxBatches{BatchSize: c.Batch, Ragged: c.policy(), LocalShuffleBufferSize: c.Shuffle, LocalShuffleSeed: &c.Seed, AllowRaise: true}
		if c.Shuffle == 0 {
			it.LocalShuffleSeed = nil
		}
		pr, perr := data.Predict(field.NewPath("iter"), c.dataset(), it, hosts)
		if pr == nil || len(pr.Groups) != 1 {
			t.Errorf("case %d %+v: no prediction: %v", i, c, perr)
			continue
		}
		g := pr.Groups[0]
		if g.Bounds != nil {
			bounded++
		}
		ok := true
		for h := range max(c.Split, 1) {
			r, found := got[[2]int{i, h}]
			if !found {
				t.Errorf("case %d %+v host %d: no result from Ray", i, c, h)
				ok = false
				continue
			}
			res := r.hostResult
			res.Case, res.Host = 0, 0
			if midEpochShort(res, g.Batches.Rows, pr.BatchSize) {
				midShort++
				if c.Policy == "Drop" && res.Outcome == "raises" {
					midShortDropRaises++
				}
			}
			if g.Bounds == nil {
				if diff := cmp.Diff(expand(g.Batches), res); diff != "" {
					t.Errorf("case %d %+v host %d: exact prediction differs (-predict +ray):\n%s", i, c, h, diff)
					ok = false
				}
			} else if why := within(g.Bounds, res, g.Batches.Rows, pr.BatchSize); why != "" {
				t.Errorf("case %d %+v host %d: Ray's %s lies outside the bounds %+v", i, c, h, why, *g.Bounds)
				ok = false
			}
			if c.Split == 0 || r.Blocks != nil {
				m := batchmodel.EpochsOfBlocks([][]int{r.Blocks}, batchmodel.Batching{BatchSize: pr.BatchSize, Devices: c.Devices, Policy: modelPolicy(c.Policy), Lookahead: 1, LocalShuffleBufferSize: c.Shuffle})[0]
				if diff := cmp.Diff(expandModel(m), res); diff != "" {
					t.Errorf("case %d %+v: model over Ray's blocks %v differs (-model +ray):\n%s", i, c, r.Blocks, diff)
					ok = false
				}
			}
		}
		if ok {
			agree++
		}
	}
	t.Logf("%d/%d agree (%d with a local shuffle, %d of them swept over buffers 1 to 2B; %d predicted as bounds; %d host results with a short batch before the end, %d of them Drop raising)",
		agree, len(cases), shuffled, len(sweepCases()), bounded, midShort, midShortDropRaises)
	fmt.Printf("grid: %d/%d agree\n", agree, len(cases))
	if len(cases) < 700 {
		t.Errorf("only %d cases; the grid must hold at least 700", len(cases))
	}
	if midShortDropRaises == 0 {
		t.Errorf("no case where Ray hands out a short batch before the end of the epoch and raises on it under Drop; the grid must hold that kind")
	}
}

// midEpochShort reports whether Ray handed out a short batch before the end
// of the epoch, of a host of rows rows: a batch under the batch size with
// another after it, or one iteration raised on with rows left after it.
func midEpochShort(r hostResult, rows, batchSize int) bool {
	yielded := 0
	for i, b := range r.Batches {
		if b[0] > 0 && b[0] < batchSize && i < len(r.Batches)-1 {
			return true
		}
		yielded += b[0]
	}
	var short int
	_, err := fmt.Sscanf(r.Error, "The local batch size (%d)", &short)
	return r.Outcome == "raises" && err == nil && yielded+short < rows
}

func runGrid(t *testing.T, py string, cases []gridCase) ([]gridResult, error) {
	var out []gridResult
	err := crossRay.request(t, py, "grid", cases, nil, func(line []byte) {
		var r gridResult
		if json.Unmarshal(line, &r) == nil && r.Batches != nil {
			out = append(out, r)
		}
	})
	return out, err
}
