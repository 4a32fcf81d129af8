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
	Workers    int      `json:"-"`     // hosts Predict is told of (unsplit)
}

// gridResult is a grid line: a hostResult plus the blocks Ray's batcher
// received (unsplit cases).
type gridResult struct {
	hostResult
	Blocks []int `json:"blocks"`
}

// gridCases generates the grid with a fixed seed, by kind: local shuffle
// buffers around the batch size (none, 1, B/2, B-1, B, B+1, 3B/2, 2B-3,
// 2B-2, 2B), datasets every worker reads whole and a few split ones, block
// counts from Ray's choice to 40, 1 to 8 devices, the default batch size,
// and from_items with per-column paddings.
func gridCases() []gridCase {
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
// datasets read whole, it also runs the model on the blocks Ray's batcher
// received and requires the same batches exactly, so every shuffle case
// checks the batcher model itself, whatever order the blocks came in.
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
	agree, bounded, shuffled := 0, 0, 0
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
			if g.Bounds == nil {
				if diff := cmp.Diff(expand(g.Batches), res); diff != "" {
					t.Errorf("case %d %+v host %d: exact prediction differs (-predict +ray):\n%s", i, c, h, diff)
					ok = false
				}
			} else if why := within(g.Bounds, res, g.Batches.Rows, pr.BatchSize); why != "" {
				t.Errorf("case %d %+v host %d: Ray's %s lies outside the bounds %+v", i, c, h, why, *g.Bounds)
				ok = false
			}
			if c.Split == 0 {
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
	t.Logf("%d/%d agree (%d with a local shuffle, %d predicted as bounds)", agree, len(cases), shuffled, bounded)
	fmt.Printf("grid: %d/%d agree\n", agree, len(cases))
	if len(cases) < 150 {
		t.Errorf("only %d cases; the grid must hold at least 150", len(cases))
	}
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
