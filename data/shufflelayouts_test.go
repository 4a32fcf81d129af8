package data_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/batchmodel"
)

// shuffleCase draws a local shuffle case over every buffer from 1 to 2B
// rows, batches of 4, 6, 9 and 16 rows, 1 to 4 devices and up to 14
// batches of rows.
func shuffleCase(r *rand.Rand) (n int, it data.IterJaxBatches, d int, b batchmodel.Batching) {
	B := []int{4, 6, 9, 16}[r.IntN(4)]
	d = 1 + r.IntN(4)
	if B%d != 0 {
		d = 1
	}
	p := r.IntN(3)
	it = data.IterJaxBatches{BatchSize: B, Ragged: []data.RaggedPolicy{data.Raise{}, data.Drop{}, data.Pad{Value: -1}}[p],
		LocalShuffleBufferSize: 1 + r.IntN(2*B), AllowRaise: true}
	b = batchmodel.Batching{BatchSize: B, Devices: d, Policy: []batchmodel.Policy{batchmodel.Raise, batchmodel.Drop, batchmodel.Pad}[p],
		Lookahead: 1, LocalShuffleBufferSize: it.LocalShuffleBufferSize}
	return r.IntN(14 * B), it, d, b
}

// agrees reports how the batcher model's epoch over some blocks departs
// from Predict's group: exact, or inside its bounds.
func agrees(g data.HostGroup, m batchmodel.HostBatches, B int) string {
	if g.Bounds == nil {
		p := g.Batches
		if string(m.Outcome) != string(p.Outcome) || m.AtBatch != p.AtBatch || m.Batches != p.Batches || m.RowsDropped != p.RowsDropped || m.PadRows != p.PadRows {
			return fmt.Sprintf("exact prediction %+v", p)
		}
		return ""
	}
	b := g.Bounds
	in := func(v int, r [2]int) bool { return v >= r[0] && v <= r[1] }
	ok := slices.Contains(b.Outcomes, data.Outcome(m.Outcome)) && in(m.Batches, b.Batches) && in(m.RowsDropped, b.RowsDropped) && in(m.PadRows, b.PadRows)
	for i, r := range m.Runs {
		if r.Rows > 0 && r.Rows < B && (i < len(m.Runs)-1 || r.Batches > 1) && !in(r.Rows, b.ShortBatch) {
			ok = false
		}
	}
	if !ok {
		return fmt.Sprintf("bounds %+v", *b)
	}
	return ""
}

// Over blocks Ray chooses at run time, Predict's bounds hold for every
// block layout: random layouts of a range's rows, run through the batcher
// model (which TestCrossCheckGrid checks against Ray), lie inside them.
func TestPredictBoundsHoldOverLayouts(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(50, 1))
	for range 4000 {
		n, it, d, b := shuffleCase(r)
		var blocks []int
		most := 1 + r.IntN(3*b.BatchSize)
		for left := n; left > 0; {
			k := min(left, 1+r.IntN(most))
			blocks = append(blocks, k)
			left -= k
		}
		pr, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: n}), it, data.Hosts{Workers: 1, LocalDevices: d, NotSplit: true})
		if err != nil {
			t.Fatalf("%d rows, %+v: %v", n, it, err)
		}
		m := batchmodel.EpochsOfBlocks([][]int{blocks}, b)[0]
		if why := agrees(pr.Groups[0], m, b.BatchSize); why != "" {
			t.Fatalf("%d rows, batch %d, buffer %d, %d devices, %s, blocks %v: the model's %+v is outside Predict's %s",
				n, b.BatchSize, it.LocalShuffleBufferSize, d, data.Describe(it.Ragged), blocks, m, why)
		}
	}
}

// Over a range with overrideNumBlocks, Predict is exact, or bounds the
// epoch, for every order the read tasks can finish in.
func TestPredictHoldsOverReadOrders(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(50, 2))
	for range 4000 {
		n, it, d, b := shuffleCase(r)
		k := 1 + r.IntN(40)
		q := max(1, n/k) // range_datasource.py: tasks of n//k rows, the last shorter
		var blocks []int
		for i := 0; i < n; i += q {
			blocks = append(blocks, min(q, n-i))
		}
		r.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		pr, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: n, OverrideNumBlocks: k}), it, data.Hosts{Workers: 1, LocalDevices: d, NotSplit: true})
		if err != nil {
			t.Fatalf("%d rows in %d blocks, %+v: %v", n, k, it, err)
		}
		m := batchmodel.EpochsOfBlocks([][]int{blocks}, b)[0]
		if why := agrees(pr.Groups[0], m, b.BatchSize); why != "" {
			t.Fatalf("%d rows in %d blocks, batch %d, buffer %d, %d devices, %s, blocks %v: the model's %+v is outside Predict's %s",
				n, k, b.BatchSize, it.LocalShuffleBufferSize, d, data.Describe(it.Ragged), blocks, m, why)
		}
	}
}
