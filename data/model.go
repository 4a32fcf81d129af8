package data

import (
	"fmt"
	"slices"
)

// Batching is what the batching model needs to know about one
// iter_jax_batches call, besides the rows of each host's shard.
type Batching struct {
	// BatchSize is rows per host per batch.
	BatchSize int
	// Devices is the JAX devices of one host (jax.local_device_count()).
	Devices int
	// Policy is the ragged-batch policy; nil is Raise.
	Policy RaggedPolicy
	// Sync is true when Ray takes the synchronising path:
	// synchronize_batches=True and jax.process_count() > 1.
	Sync bool
	// Lookahead is the synchronisation window, max(prefetch_batches, 1).
	Lookahead int
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
	h.Runs = append(h.Runs, Run{Batches: n, Rows: rows, Pad: pad})
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

// ModelBatches predicts, for every host, the batches iter_jax_batches
// yields over one epoch of a shard of shards[h] rows and how the epoch
// ends. It is arithmetic: its cost grows with the number of hosts, not
// rows or batches. b.BatchSize and b.Devices must be positive.
//
// The model yields a host's short batch last. Real Ray does so with
// prefetch_batches 1; with more, its thread-pooled formatting was seen to
// yield the short batch before a full one, so only the multiset of batch
// shapes (and the outcome) is predicted then.
func ModelBatches(shards []int, b Batching) []HostBatches {
	out := make([]HostBatches, len(shards))
	if b.Sync {
		modelSync(shards, b, out)
		return out
	}
	for h, n := range shards {
		out[h] = modelLocal(n, b)
	}
	return out
}

// modelLocal is _yield_batches_no_sync: every host on its own.
func modelLocal(n int, b Batching) HostBatches {
	B, d := b.BatchSize, b.Devices
	full, r := n/B, n%B
	h := HostBatches{Rows: n, Outcome: Completes}
	h.add(full, B, 0)
	if r == 0 {
		return h
	}
	switch kindOf(b.Policy) {
	case kindDrop:
		h.RowsDropped = r
	case kindPad:
		h.add(1, r, B-r)
	default:
		if r%d != 0 {
			h.RowsDropped = r
			h.fail(Raises, full, errLocalNotDivisible(r, d))
		} else {
			h.add(1, r, 0)
		}
	}
	return h
}

// modelSync is _yield_batches_with_sync: per batch index k, every host
// sees whether each host has a k-th batch and its size.
func modelSync(shards []int, b Batching, out []HostBatches) {
	B, d := b.BatchSize, b.Devices
	kind := kindOf(b.Policy)
	// count: batches each host's local batcher yields; last: the size of
	// its last batch when short (0 when none).
	count := func(n int) (int, int) {
		if kind == kindDrop {
			return n / B, 0
		}
		if n%B != 0 {
			return n/B + 1, n % B
		}
		return n / B, 0
	}
	kmin, kmax := -1, 0
	for _, n := range shards {
		c, _ := count(n)
		if kmin < 0 || c < kmin {
			kmin = c
		}
		kmax = max(kmax, c)
	}
	kmin = max(kmin, 0)
	for h, n := range shards {
		out[h] = HostBatches{Rows: n, Outcome: Completes}
	}
	switch kind {
	case kindDrop:
		// All yield kmin full batches; the first host to run out stops all.
		for h, n := range shards {
			out[h].add(kmin, B, 0)
			out[h].RowsDropped = n - kmin*B
		}
	case kindPad:
		empty := slices.ContainsFunc(shards, func(n int) bool { return n == 0 })
		if empty && kmax > 0 {
			// An empty host has no template for its dummy batch at k=0 and
			// raises; the others yield what the first window gathered and
			// block in the next all-gather.
			for h, n := range shards {
				c, r := count(n)
				if n == 0 {
					out[h].fail(Raises, 0, errNoTemplate)
					continue
				}
				w := min(b.Lookahead, kmax) // slots of the first window
				full := min(c, w)
				if r > 0 && full == c {
					out[h].add(full-1, B, 0)
					out[h].add(1, r, B-r)
				} else {
					out[h].add(full, B, 0)
				}
				out[h].add(w-full, 0, B)
				out[h].RowsDropped = n - out[h].RowsYielded
				out[h].fail(Blocks, w, "")
			}
			return
		}
		for h, n := range shards {
			c, r := count(n)
			if r > 0 {
				out[h].add(c-1, B, 0)
				out[h].add(1, r, B-r)
			} else {
				out[h].add(c, B, 0)
			}
			out[h].add(kmax-c, 0, B)
		}
	default:
		if kmax == 0 {
			return
		}
		// Sizes agree on every index below kmin-1; at kmin-1 a host whose
		// last (short) batch falls there has its short size.
		if kmin > 0 {
			lo, hi := -1, 0
			for _, n := range shards {
				s := B
				if c, r := count(n); c == kmin && r > 0 {
					s = r
				}
				if lo < 0 || s < lo {
					lo = s
				}
				hi = max(hi, s)
			}
			msg := ""
			switch {
			case lo != hi:
				msg = errUnevenSizes(lo, hi)
			case lo%d != 0:
				msg = errGlobalNotDivisible(lo, d)
			}
			for h, n := range shards {
				c, r := count(n)
				if msg != "" {
					out[h].add(kmin-1, B, 0)
					out[h].RowsDropped = n - out[h].RowsYielded
					out[h].fail(Raises, kmin-1, msg)
					continue
				}
				if c == kmin && r > 0 {
					out[h].add(kmin-1, B, 0)
					out[h].add(1, r, 0)
				} else {
					out[h].add(kmin, B, 0)
				}
			}
			if msg != "" {
				return
			}
		}
		if kmax > kmin {
			for h, n := range shards {
				out[h].RowsDropped = n - out[h].RowsYielded
				out[h].fail(Raises, kmin, errUnevenCount)
			}
		}
	}
}
