package data

import (
	"slices"
)

// MinLocalShuffleBuffer is the smallest local_shuffle_buffer_size for which
// Ray's shuffling batcher never hands out a short batch before the end of
// the epoch, whatever the blocks: 2·batchSize-2 (at least batchSize).
func MinLocalShuffleBuffer(batchSize int) int { return max(2*batchSize-2, batchSize) }

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
