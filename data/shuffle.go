package data

import "slices"

// Ray 2.60's local shuffle, ray/data/_internal/batcher.py: ShufflingBatcher,
// fed block by block by ray/data/_internal/block_batching/util.py:
// _BatchingIterator.__next__.
//
// With buffer S' = max(local_shuffle_buffer_size, batch_size) (batcher.py:360-364),
// yield threshold Y = max(1, ⌊S'/2⌋) and compaction threshold C = ⌊1.5·S'⌋
// (batcher.py:366-371), the batcher holds c compacted rows (the shuffled
// buffer, not yet handed out) and u uncompacted rows (blocks added since).
// Before the last block, it has a batch when c+u ≥ B and (c ≥ Y or
// c+u-B ≥ C) (batcher.py:447-453); after it, when c+u ≥ B (batcher.py:454-455).
// next_batch first compacts (c += u, u = 0) when u > 0 and, before the last
// block, c ≤ Y (batcher.py:510-514), then takes min(B, c) rows
// (batcher.py:109). So when Y < c < B with a block pending, it hands out a
// short batch of c rows in the middle of the epoch. That needs Y ≤ B-2,
// i.e. a buffer below 2B-2 rows. drop_last drops only the batch handed out
// after the input ends (util.py:324-326).

// shuffleBuffer is the ShufflingBatcher's thresholds for batch size B and
// local_shuffle_buffer_size s.
type shuffleBuffer struct{ B, Y, C int }

func newShuffleBuffer(B, s int) shuffleBuffer {
	sp := max(s, B)
	return shuffleBuffer{B: B, Y: max(1, sp/2), C: sp + sp/2}
}

// shortPossible reports whether some block layout of n rows makes the
// batcher hand out a short batch before the input ends. It needs Y ≤ B-2,
// and a compaction before the last block (at least B+C rows added) with a
// row still to come.
func (s shuffleBuffer) shortPossible(n int) bool {
	return s.Y <= s.B-2 && n >= s.B+s.C+1
}

// MinLocalShuffleBuffer is the smallest local_shuffle_buffer_size for which
// Ray's shuffling batcher never hands out a short batch before the end of
// the epoch, whatever the blocks: 2·batchSize-2 (at least batchSize).
func MinLocalShuffleBuffer(batchSize int) int { return max(2*batchSize-2, batchSize) }

// ShuffledBatches returns the sizes of the batches Ray's ShufflingBatcher
// hands out, in order, as runs (Pad 0), for blocks of the given sizes
// arriving in order, batch size B and local_shuffle_buffer_size s. Empty
// blocks are skipped, as Ray does. Its cost grows with the blocks and the
// short batches, not with rows.
func ShuffledBatches(blocks []int, B, s int, dropLast bool) []Run {
	sb := newShuffleBuffer(B, s)
	var runs []Run
	c, u := 0, 0
	for _, n := range blocks {
		if n <= 0 {
			continue
		}
		u += n
		for {
			if t := c + u; t < B || (c < sb.Y && t-B < sb.C) {
				break
			}
			if u > 0 && c <= sb.Y {
				c, u = c+u, 0 // compaction
			}
			if c < B {
				runs = appendRun(runs, 1, c) // short batch: Y < c < B
				c = 0
				continue
			}
			// Full batches until the condition changes: with u = 0 while
			// c ≥ max(B, min(Y, B+C)); with u > 0 (so c > Y) while
			// c ≥ max(B, Y+1), after which the next one compacts.
			t := max(B, sb.Y+1)
			if u == 0 {
				t = max(B, min(sb.Y, B+sb.C))
			}
			k := (c-t)/B + 1
			runs = appendRun(runs, k, B)
			c -= k * B
		}
	}
	t := c + u
	runs = appendRun(runs, t/B, B)
	if r := t % B; r > 0 && !dropLast {
		runs = appendRun(runs, 1, r)
	}
	return runs
}

// targetRowsPerRangeBlock is the rows of one ray.data.range block before
// the read task splits it: DataContext.target_max_block_size (128 MiB)
// over 8 bytes a row (range_datasource.py:58-60).
const targetRowsPerRangeBlock = 128 << 20 / 8

// blockLayout is what is known before running about the blocks a dataset
// iterator receives.
type blockLayout struct {
	// tasks are the read tasks' blocks, in read order.
	tasks [][]int
	// fixed: blocks arrive in read order; otherwise tasks arrive in the
	// order they finish (preserve_order is False by default).
	fixed bool
}

// layout returns the dataset's block layout, ok false when it is Ray's
// choice (no overrideNumBlocks), comes from files, or a step reshapes it.
func (d Dataset) layout() (blockLayout, bool) {
	if len(d.steps) > 0 {
		return blockLayout{}, false
	}
	switch s := d.source.(type) {
	case Range:
		// ray/data/_internal/datasource/range_datasource.py:48,98-113:
		// tasks of max(1, n//k) rows, the last one shorter.
		if s.OverrideNumBlocks <= 0 || s.N < 0 {
			return blockLayout{}, false
		}
		q := max(1, s.N/s.OverrideNumBlocks)
		var tasks [][]int
		for i := 0; i < s.N; i += q {
			count := min(q, s.N-i)
			var blocks []int
			for count > 0 {
				n := min(count, targetRowsPerRangeBlock)
				blocks = append(blocks, n)
				count -= n
			}
			tasks = append(tasks, blocks)
		}
		return blockLayout{tasks: tasks}, true
	case FromItems:
		// ray/data/read_api.py: from_items builds min(len, k) blocks with
		// divmod, the first len mod k one item longer, and materialises
		// them, so they are iterated in that order.
		if s.OverrideNumBlocks <= 0 {
			return blockLayout{}, false
		}
		p := min(len(s.Items), s.OverrideNumBlocks)
		var tasks [][]int
		if p > 0 {
			q, r := len(s.Items)/p, len(s.Items)%p
			for i := range p {
				tasks = append(tasks, []int{q + btoi(i < r)})
			}
		}
		return blockLayout{tasks: tasks, fixed: true}, true
	}
	return blockLayout{}, false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxOrders caps the block orders Predict tries for a layout whose tasks
// may finish in any order.
const maxOrders = 4096

// orders returns the block sequences the layout can arrive in that can
// give different batches, read order first: the read order, and, unless
// fixed, the last (shorter) task moved to every other place, as the tasks
// finish in any order and all but the last are alike. ok is false for a
// layout of another shape, or over maxOrders tasks.
func (l blockLayout) orders() ([][]int, bool) {
	flat := func(tasks [][]int) []int {
		var out []int
		for _, t := range tasks {
			out = append(out, t...)
		}
		return out
	}
	n := len(l.tasks)
	if l.fixed || n < 2 || slices.Equal(l.tasks[n-1], l.tasks[0]) && alike(l.tasks) {
		return [][]int{flat(l.tasks)}, true
	}
	if !alike(l.tasks[:n-1]) || n > maxOrders {
		return nil, false
	}
	seqs := [][]int{flat(l.tasks)}
	for pos := range n - 1 {
		tasks := slices.Clone(l.tasks[:n-1])
		tasks = slices.Insert(tasks, pos, l.tasks[n-1])
		seqs = append(seqs, flat(tasks))
	}
	return seqs, true
}

// alike reports whether every task has the same blocks.
func alike(tasks [][]int) bool {
	for _, t := range tasks[1:] {
		if !slices.Equal(t, tasks[0]) {
			return false
		}
	}
	return true
}
