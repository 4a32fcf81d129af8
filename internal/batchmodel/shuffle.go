package batchmodel

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

// ShuffleBuffer is the ShufflingBatcher's thresholds for batch size B and
// local_shuffle_buffer_size s: the yield threshold Y and the compaction
// threshold C.
type ShuffleBuffer struct{ B, Y, C int }

// NewShuffleBuffer returns the thresholds for batch size B and buffer s.
func NewShuffleBuffer(B, s int) ShuffleBuffer {
	sp := max(s, B)
	return ShuffleBuffer{B: B, Y: max(1, sp/2), C: sp + sp/2}
}

// ShortPossible reports whether some block layout of n rows makes the
// batcher hand out a short batch before the input ends. It needs Y ≤ B-2,
// and a compaction before the last block (at least B+C rows added) with a
// row still to come.
func (s ShuffleBuffer) ShortPossible(n int) bool {
	return s.Y <= s.B-2 && n >= s.B+s.C+1
}

// Shuffled returns the sizes of the batches Ray's ShufflingBatcher
// hands out, in order, as runs (Pad 0), for blocks of the given sizes
// arriving in order, batch size B and local_shuffle_buffer_size s. Empty
// blocks are skipped, as Ray does. Its cost grows with the blocks and the
// short batches, not with rows.
func Shuffled(blocks []int, B, s int, dropLast bool) []Run {
	sb := NewShuffleBuffer(B, s)
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
				runs = AppendRun(runs, 1, c) // short batch: Y < c < B
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
			runs = AppendRun(runs, k, B)
			c -= k * B
		}
	}
	t := c + u
	runs = AppendRun(runs, t/B, B)
	if r := t % B; r > 0 && !dropLast {
		runs = AppendRun(runs, 1, r)
	}
	return runs
}
