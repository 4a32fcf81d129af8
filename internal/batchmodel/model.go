// Package batchmodel is the arithmetic model of Ray 2.60's
// iter_jax_batches behind data.Predict: the batches each host yields over
// one epoch, with and without batch synchronisation and a local shuffle,
// and how the epoch ends. It is plumbing: data.Predict is its public face,
// and the cross-checks against real Ray (internal/crosscheck/datamodel)
// test it directly.
package batchmodel

import "fmt"

// Policy is the ragged-batch policy of iter_jax_batches: what happens to
// a host's last, short batch.
type Policy int

// The policies; the zero value is Raise, Ray's default.
const (
	// Raise: drop_last=False, paddings=None; a short batch must divide by
	// the local devices, else iteration raises ValueError.
	Raise Policy = iota
	// Drop: drop_last=True.
	Drop
	// Pad: paddings set; a short batch is padded to the batch size.
	Pad
)

// Batching is what the batching model needs to know about one
// iter_jax_batches call, besides the rows of each host's shard.
type Batching struct {
	// BatchSize is rows per host per batch.
	BatchSize int
	// Devices is the JAX devices of one host (jax.local_device_count()).
	Devices int
	// Policy is the ragged-batch policy.
	Policy Policy
	// Sync is true when Ray takes the synchronising path:
	// synchronize_batches=True and jax.process_count() > 1.
	Sync bool
	// Lookahead is the synchronisation window, max(prefetch_batches, 1).
	Lookahead int
	// LocalShuffleBufferSize is local_shuffle_buffer_size: 0 is no local
	// shuffle (Ray's Batcher), above 0 Ray's ShufflingBatcher, which can
	// hand out a short batch before the end of the epoch (see
	// [EpochsOfBlocks]).
	LocalShuffleBufferSize int
}

// Run is a stretch of equal batches a host yields: Batches batches, each
// of Rows data rows followed by Pad padding rows. A dummy batch (a host
// that ran out yields padding while others still have data) has Rows 0.
type Run struct {
	Batches int `json:"batches"`
	Rows    int `json:"rows"`
	Pad     int `json:"pad,omitempty"`
}

// Outcome is how a host's first epoch ends.
type Outcome string

// The outcomes.
const (
	// Completes: the host iterates to the end.
	Completes Outcome = "completes"
	// Raises: iter_jax_batches raises ValueError on this host.
	Raises Outcome = "raises"
	// Blocks: the host waits in an all-gather that a failed host never
	// joins; the run fails when Ray or JAX notices the dead process.
	Blocks Outcome = "blocks"
)

// HostBatches is the model's account of one host's first epoch.
type HostBatches struct {
	// Rows in the host's shard.
	Rows int `json:"rows"`
	// Runs are the batches yielded, in order.
	Runs []Run `json:"runs"`
	// Batches yielded, data rows yielded, data rows never yielded, and
	// padding rows yielded.
	Batches     int `json:"batches"`
	RowsYielded int `json:"rowsYielded"`
	RowsDropped int `json:"rowsDropped"`
	PadRows     int `json:"padRows"`
	// Outcome and, unless it completes, the batch index where it ends and
	// Ray's error text (for Raises).
	Outcome Outcome `json:"outcome"`
	AtBatch int     `json:"atBatch,omitempty"`
	Error   string  `json:"error,omitempty"`
}

func (h *HostBatches) add(n, rows, pad int) {
	if n <= 0 {
		return
	}
	if k := len(h.Runs); k > 0 && h.Runs[k-1].Rows == rows && h.Runs[k-1].Pad == pad {
		h.Runs[k-1].Batches += n
	} else {
		h.Runs = append(h.Runs, Run{Batches: n, Rows: rows, Pad: pad})
	}
	h.Batches += n
	h.RowsYielded += n * rows
	h.PadRows += n * pad
}

func (h *HostBatches) fail(o Outcome, at int, msg string) {
	h.Outcome, h.AtBatch, h.Error = o, at, msg
}

// Ray's ValueError texts (ray/data/util/jax_util.py, Ray 2.60).
func errLocalNotDivisible(r, d int) string {
	return fmt.Sprintf("The local batch size (%d) must be evenly divisible by the number of local JAX devices (%d) on this host. "+
		"To safely truncate or pad the batch, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`.", r, d)
}

func errGlobalNotDivisible(r, d int) string {
	return fmt.Sprintf("The globally minimum batch size (%d) must be evenly divisible by the number of local JAX devices (%d) on this host. "+
		"To safely truncate or pad the batch, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`.", r, d)
}

func errUnevenSizes(lo, hi int) string {
	return fmt.Sprintf("Uneven batch sizes detected across JAX workers. Host batch sizes range from %d to %d. "+
		"To handle uneven batch sizes, provide a `paddings` in `iter_jax_batches()`.", lo, hi)
}

const errUnevenCount = "Uneven number of batches detected across JAX workers. " +
	"To safely drop orphaned batches without hanging, set `drop_last=True` or provide a `paddings` in `iter_jax_batches()`."

const errNoTemplate = "Cannot create dummy batches for synchronization because this JAX host has not received any data batches to use as a template. " +
	"This usually happens if one JAX host's dataset shard is completely empty while others have data. " +
	"Ensure that all JAX hosts have at least one batch of data, or use `drop_last=True` to avoid yielding dummy batches."

// Epochs predicts, for every host, the batches iter_jax_batches
// yields over one epoch of a shard of shards[h] rows and how the epoch
// ends, as if each host's rows reached its batcher in one block. Without a
// local shuffle the blocks make no difference, so this is exact; with one,
// see [EpochsOfBlocks]. It is arithmetic: its cost grows with the number of
// hosts, not rows or batches. b.BatchSize and b.Devices must be positive.
//
// The model yields a host's batches in the order Ray's batcher hands them
// out. Real Ray does so with prefetch_batches 1; with more, its
// thread-pooled formatting was seen to yield a short batch before a full
// one, so only the multiset of batch shapes (and the outcome) is predicted
// then.
func Epochs(shards []int, b Batching) []HostBatches {
	blocks := make([][]int, len(shards))
	for h, n := range shards {
		blocks[h] = []int{n}
	}
	return EpochsOfBlocks(blocks, b)
}

// EpochsOfBlocks is [Epochs] for hosts whose iterators receive the
// blocks blocks[h] (rows per block, in arrival order). With a local
// shuffle the batches depend on these sizes and their order (see
// Shuffled); given them, the model is exact. Its cost grows with
// the number of blocks and of short batches, not rows.
func EpochsOfBlocks(blocks [][]int, b Batching) []HostBatches {
	rows := make([]int, len(blocks))
	seqs := make([][]Run, len(blocks))
	for h, bl := range blocks {
		for _, n := range bl {
			rows[h] += max(n, 0)
		}
		seqs[h] = localBatches(bl, rows[h], b)
	}
	out := make([]HostBatches, len(blocks))
	if b.Sync {
		modelSync(rows, seqs, b, out)
		return out
	}
	for h := range blocks {
		out[h] = modelLocal(rows[h], seqs[h], b)
	}
	return out
}

// localBatches is the batch sizes Ray's batcher hands iter_jax_batches, as
// runs (Pad 0): without a shuffle, Batcher's full batches and, unless
// drop_last, one short batch of what is left.
func localBatches(blocks []int, n int, b Batching) []Run {
	dropLast := b.Policy == Drop
	if b.LocalShuffleBufferSize > 0 {
		return Shuffled(blocks, b.BatchSize, b.LocalShuffleBufferSize, dropLast)
	}
	var runs []Run
	runs = AppendRun(runs, n/b.BatchSize, b.BatchSize)
	if r := n % b.BatchSize; r > 0 && !dropLast {
		runs = AppendRun(runs, 1, r)
	}
	return runs
}

// AppendRun appends k batches of size rows, merging with the last run.
func AppendRun(runs []Run, k, rows int) []Run {
	if k <= 0 {
		return runs
	}
	if n := len(runs); n > 0 && runs[n-1].Rows == rows {
		runs[n-1].Batches += k
		return runs
	}
	return append(runs, Run{Batches: k, Rows: rows})
}

// modelLocal is _yield_batches_no_sync: every host on its own. A short
// batch is padded (Pad) or must divide by the local devices (Drop,
// Raise: drop_last only drops the batcher's last batch).
func modelLocal(n int, seq []Run, b Batching) HostBatches {
	B, d := b.BatchSize, b.Devices
	h := HostBatches{Rows: n, Outcome: Completes}
	pad := b.Policy == Pad
	for _, r := range seq {
		switch {
		case r.Rows >= B:
			h.add(r.Batches, r.Rows, 0)
		case pad:
			h.add(r.Batches, r.Rows, B-r.Rows)
		case r.Rows%d != 0:
			h.fail(Raises, h.Batches, errLocalNotDivisible(r.Rows, d))
			h.RowsDropped = n - h.RowsYielded
			return h
		default:
			h.add(r.Batches, r.Rows, 0)
		}
	}
	h.RowsDropped = n - h.RowsYielded
	return h
}

// cursor walks one host's runs batch by batch.
type cursor struct {
	runs []Run
	i    int // current run
	used int // batches of runs[i] already taken
}

func (c *cursor) has() bool { return c.i < len(c.runs) }

// left is the batches left in the current run.
func (c *cursor) left() int { return c.runs[c.i].Batches - c.used }

func (c *cursor) size() int { return c.runs[c.i].Rows }

func (c *cursor) skip(k int) {
	c.used += k
	if c.used == c.runs[c.i].Batches {
		c.i, c.used = c.i+1, 0
	}
}

// modelSync is _yield_batches_with_sync: per batch index k, every host
// sees whether each host has a k-th batch and its size. It walks the hosts'
// runs together, a stretch of indices where no host's size changes at a
// time.
func modelSync(rows []int, seqs [][]Run, b Batching, out []HostBatches) {
	kind := b.Policy
	kmax := 0
	empty := false
	for h, seq := range seqs {
		out[h] = HostBatches{Rows: rows[h], Outcome: Completes}
		c := 0
		for _, r := range seq {
			c += r.Batches
		}
		kmax = max(kmax, c)
		empty = empty || c == 0
	}
	limit := -1
	if kind == Pad && empty && kmax > 0 {
		// A host without a batch has no template for its dummy batch at
		// k=0 and raises; the others yield what the first window gathered
		// and block in the next all-gather.
		limit = min(b.Lookahead, kmax)
	}
	syncWalk(seqs, b, out, limit)
	for h := range out {
		out[h].RowsDropped = rows[h] - out[h].RowsYielded
		if limit >= 0 && out[h].Outcome == Completes {
			if len(seqs[h]) == 0 {
				out[h].fail(Raises, 0, errNoTemplate)
			} else {
				out[h].fail(Blocks, limit, "")
			}
		}
	}
}

// syncWalk yields batch indices in stretches until every host runs out, an
// error, or limit indices (limit < 0: no limit).
func syncWalk(seqs [][]Run, b Batching, out []HostBatches, limit int) {
	B, d := b.BatchSize, b.Devices
	kind := b.Policy
	cur := make([]cursor, len(seqs))
	for h := range seqs {
		cur[h] = cursor{runs: seqs[h]}
	}
	failAll := func(k int, msg string) {
		for h := range out {
			out[h].fail(Raises, k, msg)
		}
	}
	for k := 0; limit < 0 || k < limit; {
		all, any := true, false
		L, lo, hi := -1, -1, 0
		for h := range cur {
			if !cur[h].has() {
				all = false
				continue
			}
			any = true
			if L < 0 || cur[h].left() < L {
				L = cur[h].left()
			}
			s := cur[h].size()
			if lo < 0 || s < lo {
				lo = s
			}
			hi = max(hi, s)
		}
		if !any {
			return
		}
		if limit >= 0 {
			L = min(L, limit-k)
		}
		if !all {
			switch kind {
			case Drop:
				return
			case Raise:
				failAll(k, errUnevenCount)
				return
			}
		}
		if kind == Pad {
			for h := range cur {
				if cur[h].has() {
					s := cur[h].size()
					out[h].add(L, s, B-min(s, B))
					cur[h].skip(L)
				} else if len(seqs[h]) > 0 {
					out[h].add(L, 0, B) // dummy batches
				}
			}
			k += L
			continue
		}
		switch {
		case lo != hi:
			failAll(k, errUnevenSizes(lo, hi))
			return
		case lo%d != 0:
			failAll(k, errGlobalNotDivisible(lo, d))
			return
		}
		for h := range cur {
			out[h].add(L, lo, 0)
			cur[h].skip(L)
		}
		k += L
	}
}
