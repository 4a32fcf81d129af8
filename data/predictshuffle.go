package data

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/batchmodel"
	"github.com/raytpu/raytpu/placement"
)

// predictGroup predicts the epoch of W hosts that each iterate n rows. It
// is exact unless a local shuffle may hand out a short batch before the end
// of the epoch and the blocks that decide it are not known: then Batches
// is the nominal case and Bounds what may happen.
func predictGroup(ds Dataset, n, W int, split bool, b batchmodel.Batching) HostGroup {
	nominal := modelEpochs([]int{n}, b)[0]
	g := HostGroup{Hosts: W, Batches: nominal}
	if b.LocalShuffleBufferSize == 0 {
		return g
	}
	sb := batchmodel.NewShuffleBuffer(b.BatchSize, b.LocalShuffleBufferSize)
	if !sb.ShortPossible(n) {
		return g // every layout gives the unshuffled batches
	}
	hosts := 1
	if b.Sync {
		hosts = W
	}
	cond := "the sizes and order of the blocks Ray Train's split hands each host, which depend on timing"
	if !split {
		cond = "the block sizes Ray chooses at run time (set overrideNumBlocks on a range or fromItems source, with no steps, to fix them)"
		if l, ok := ds.layout(); ok {
			if seqs, ok := l.orders(); ok {
				results := make([]HostBatches, len(seqs))
				for i, seq := range seqs {
					same := make([][]int, hosts)
					for h := range same {
						same[h] = seq
					}
					results[i] = modelEpochsOfBlocks(same, b)[0]
				}
				g.Batches, g.blocks = results[0], seqs[0]
				if len(seqs) == 1 || !slices.ContainsFunc(results[1:], func(r HostBatches) bool { return !sameBatches(r, results[0]) }) {
					return g
				}
				cond = "the order the read tasks finish in (preserve_order is off): the last, shorter block may come before others"
				if !b.Sync {
					g.Bounds = enumeratedBounds(results, seqs, b)
					g.Bounds.Condition = cond
					return g
				}
				cond += ", and each host may see another order"
			}
		}
	}
	g.Bounds = layoutBounds(n, g.Batches, sb, b)
	g.Bounds.Condition = cond
	return g
}

// sameBatches compares two epochs by their batches and outcome.
func sameBatches(a, b HostBatches) bool {
	return a.Outcome == b.Outcome && a.AtBatch == b.AtBatch && a.Error == b.Error && slices.Equal(a.Runs, b.Runs)
}

// enumeratedBounds spans the epochs of every block order tried.
func enumeratedBounds(results []HostBatches, seqs [][]int, b batchmodel.Batching) *Bounds {
	bd := &Bounds{}
	shorts := false
	for i, r := range results {
		if !slices.Contains(bd.Outcomes, r.Outcome) {
			bd.Outcomes = append(bd.Outcomes, r.Outcome)
		}
		span(&bd.Batches, r.Batches, i == 0)
		span(&bd.RowsDropped, r.RowsDropped, i == 0)
		span(&bd.PadRows, r.PadRows, i == 0)
		for _, s := range localShort(seqs[i], b) {
			span(&bd.ShortBatch, s, !shorts)
			shorts = true
		}
	}
	return bd
}

// localShort lists the sizes of the short batches the shuffling batcher
// hands out before its last batch for one block order.
func localShort(blocks []int, b batchmodel.Batching) []int {
	runs := batchmodel.Shuffled(blocks, b.BatchSize, b.LocalShuffleBufferSize, true)
	var out []int
	for _, r := range runs {
		if r.Rows < b.BatchSize {
			out = append(out, r.Rows)
		}
	}
	return out
}

func span(s *[2]int, v int, first bool) {
	if first {
		*s = [2]int{v, v}
		return
	}
	s[0], s[1] = min(s[0], v), max(s[1], v)
}

// layoutBounds bounds the epoch of a host of n rows over every block
// layout, given that a short batch may come before the end (shortPossible):
//
//   - a short batch has Y+1..B-1 rows, comes after at least one full
//     batch since the last short one, so at most ⌊n/(B+Y+1)⌋ occur and the
//     epoch has at most ⌈n/B⌉ plus that many batches, and never fewer than
//     the nominal (one block) epoch, unless it fails;
//   - Raise and Drop fail on one that does not divide by the devices (with
//     synchronisation, also when hosts' sizes differ), after at least one
//     full batch, so with at most n-B rows left out; a Drop that completes
//     leaves out its last batch, under B rows;
//   - Pad pads each: at most (batches × B) - n padding rows.
func layoutBounds(n int, nominal HostBatches, sb batchmodel.ShuffleBuffer, b batchmodel.Batching) *Bounds {
	B, d := b.BatchSize, b.Devices
	mMax := n / (B + sb.Y + 1)
	hi := (n+B-1)/B + mMax
	bd := &Bounds{Outcomes: []Outcome{nominal.Outcome}, ShortBatch: [2]int{sb.Y + 1, B - 1}}
	kind := b.Policy
	if kind == batchmodel.Pad {
		bd.Batches = [2]int{nominal.Batches, hi}
		bd.PadRows = [2]int{nominal.PadRows, max(nominal.PadRows, hi*B-n)}
		bd.RowsDropped = [2]int{nominal.RowsDropped, nominal.RowsDropped}
		return bd
	}
	mayRaise := b.Sync
	for s := sb.Y + 1; s < B && !mayRaise; s++ {
		mayRaise = s%d != 0
	}
	if nominal.Outcome != Completes {
		bd.Outcomes = append(bd.Outcomes, Completes)
	} else if mayRaise {
		bd.Outcomes = append(bd.Outcomes, Raises)
	}
	lo, dropHi := nominal.Batches, 0
	if kind == batchmodel.Drop {
		dropHi = B - 1
	}
	if mayRaise {
		lo, dropHi = min(lo, 1), max(dropHi, n-B)
	}
	bd.Batches = [2]int{lo, max(hi, nominal.Batches)}
	bd.RowsDropped = [2]int{0, max(dropHi, nominal.RowsDropped)}
	return bd
}

// shuffleFindings reports an exact epoch that the local shuffle changes:
// short batches before the end, and a failure they cause.
func shuffleFindings(note func(placement.Severity, string, *field.Path, string, ...any), p *field.Path, it IterJaxBatches, g HostGroup, n, B, d int) field.ErrorList {
	sp := p.Child("localShuffleBufferSize")
	one := g.Batches
	buf := fmt.Sprintf("a buffer of %d rows", it.LocalShuffleBufferSize)
	if it.LocalShuffleBufferSize < B {
		buf = fmt.Sprintf("%d rows, raised to batchSize %d", it.LocalShuffleBufferSize, B)
	}
	fix := fmt.Sprintf("set localShuffleBufferSize to at least %d (2×batchSize-2)", MinLocalShuffleBuffer(B))
	seq := runsOf(batchmodel.Shuffled(g.blocks, B, it.LocalShuffleBufferSize, kindOf(it.Ragged) == kindDrop))
	what := fmt.Sprintf("over the blocks this dataset is read in (%s rows), the local shuffle (%s) hands each host its %d rows as batches of %s rows, short ones before the end of the epoch",
		shapesOf(blockRuns(g.blocks)), buf, n, shapesOf(seq))
	if one.Outcome == Completes {
		if kindOf(it.Ragged) == kindPad {
			note(placement.SeverityInfo, CodeShuffleShortBatches, sp, "%s; Pad pads every short one (%d padding rows per host); %s to keep batches full", what, one.PadRows, fix)
		} else {
			note(placement.SeverityInfo, CodeShuffleShortBatches, sp, "%s; their sizes divide by the %d JAX devices, so the epoch completes; %s to keep batches full", what, d, fix)
		}
		return nil
	}
	msg := fmt.Sprintf("certain to fail in the first epoch: %s, and iter_jax_batches raises ValueError at batch %d: %s; drop_last drops only the last batch; %s, or use Pad",
		what, one.AtBatch, one.Error, fix)
	if it.AllowRaise {
		note(placement.SeverityWarning, CodeRaiseFails, sp, "%s (allowed by allowRaise)", msg)
		return nil
	}
	return field.ErrorList{field.Invalid(sp, it.LocalShuffleBufferSize, msg)}
}

// blockRuns run-length encodes block sizes.
func blockRuns(blocks []int) []Run {
	var runs []batchmodel.Run
	for _, n := range blocks {
		runs = batchmodel.AppendRun(runs, 1, n)
	}
	return runsOf(runs)
}

// shapesOf writes runs as "5×16, 1×10".
func shapesOf(runs []Run) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%d×%d", r.Batches, r.Rows)
	}
	return strings.Join(parts, ", ")
}

// boundsFinding says what may happen when the epoch depends on blocks fixed
// only at run time.
func boundsFinding(note func(placement.Severity, string, *field.Path, string, ...any), p *field.Path, bd *Bounds, B, d int, kind raggedKind) {
	var effect string
	switch {
	case kind == kindPad:
		effect = "Pad pads each"
	case slices.Contains(bd.Outcomes, Raises):
		effect = fmt.Sprintf("iteration may raise ValueError on one that does not divide by the %d JAX devices", d)
		if kind == kindDrop {
			effect += " (drop_last drops only the last batch)"
		}
	default:
		effect = fmt.Sprintf("their sizes divide by the %d JAX devices", d)
	}
	outs := make([]string, len(bd.Outcomes))
	for i, o := range bd.Outcomes {
		outs[i] = string(o)
	}
	note(placement.SeverityWarning, CodeShuffleShortBatches, p.Child("localShuffleBufferSize"),
		"may hand out short batches of %d to %d rows before the end of the epoch, depending on %s; %s. Per host, bounds, not a certainty: %d to %d batches, %d to %d rows dropped, %d to %d padding rows; outcome %s. Set it to at least %d (2×batchSize-2) to rule this out",
		bd.ShortBatch[0], bd.ShortBatch[1], bd.Condition, effect, bd.Batches[0], bd.Batches[1], bd.RowsDropped[0], bd.RowsDropped[1],
		bd.PadRows[0], bd.PadRows[1], strings.Join(outs, " or "), MinLocalShuffleBuffer(B))
}
