package data

import (
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/batchmodel"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/tpu"
)

// Hosts describes the JaxTrainer workers that iterate a dataset: one worker
// per host.
type Hosts struct {
	// Workers is the number of train workers (world size). Required.
	Workers int
	// Accelerator is the TPU generation of the workers (v6e, TPU-V4); ""
	// for CPU workers. With a TPU, JaxTrainer initialises jax.distributed,
	// so jax.process_count() is Workers; without, every worker is its own
	// one-process JAX program.
	Accelerator string
	// ChipsPerHost is the TPU chips of each worker. Optional when the
	// generation ships one host size (v4, v5p: 4). Default: that size.
	ChipsPerHost int
	// LocalDevices overrides jax.local_device_count(), e.g. for CPU hosts
	// run with --xla_force_host_platform_device_count. Optional. Default:
	// ChipsPerHost × the generation's devices per chip; 1 on CPU.
	LocalDevices int
	// NotSplit says the dataset is outside DataConfig.datasets_to_split:
	// every worker iterates all of it. Optional. Default: false (split).
	NotSplit bool
}

// The codes of Predict's findings.
const (
	// CodeRowsUnknown: the row count is known only when Ray runs (a file
	// source or a step that changes rows); only the batch size was checked.
	CodeRowsUnknown = "RowsUnknown"
	// CodeSplitDropsRows: Ray Train's equal split drops rows.
	CodeSplitDropsRows = "SplitDropsRows"
	// CodeRaiseFails: Raise (allowed by allowRaise) fails the epoch.
	CodeRaiseFails = "RaiseFails"
	// CodeDropDiscards: Drop discards more rows than the warning threshold.
	CodeDropDiscards = "DropDiscards"
	// CodePadRows: Pad adds padding rows to the last batch.
	CodePadRows = "PadRows"
	// CodeShuffleShortBatches: a local shuffle hands out short batches
	// before the end of the epoch.
	CodeShuffleShortBatches = "ShuffleShortBatches"
	// CodeSyncNoEffect: synchronizeBatches changes nothing here.
	CodeSyncNoEffect = "SyncNoEffect"
)

// HostGroup is a run of hosts whose first epoch is the same.
type HostGroup struct {
	// Hosts counts the hosts; Ranks lists them, or is nil when the group
	// holds every host.
	Hosts int   `json:"hosts"`
	Ranks []int `json:"ranks,omitempty"`
	// Batches is the hosts' epoch: exact when Bounds is nil; otherwise the
	// nominal case Bounds names (every host's rows in one block, or the
	// blocks in read order).
	Batches HostBatches `json:"batches"`
	// Bounds is set when the epoch depends on what is fixed only when Ray
	// runs (the sizes and order of blocks under a local shuffle): what may
	// happen, as bounds, never as a certainty.
	Bounds *Bounds `json:"bounds,omitempty"`
	// blocks are the block sizes, in arrival order, of an exact
	// prediction under a local shuffle that depends on them.
	blocks []int
}

// Bounds is what Predict can only bound about a host's epoch. Each pair is
// [low, high]: no block layout gives fewer or more, though not every value
// between need occur.
type Bounds struct {
	// Condition says what the epoch depends on.
	Condition string `json:"condition"`
	// Outcomes lists every outcome that may occur.
	Outcomes    []Outcome `json:"outcomes"`
	Batches     [2]int    `json:"batches"`
	RowsDropped [2]int    `json:"rowsDropped"`
	PadRows     [2]int    `json:"padRows"`
	// ShortBatch is the sizes a short batch handed out before the end of
	// the epoch may have; [0, 0] when none may.
	ShortBatch [2]int `json:"shortBatch"`
}

// Prediction is what Predict expects one epoch of iter_jax_batches to do.
type Prediction struct {
	// Rows of the dataset, -1 when unknown before running.
	Rows      int    `json:"rows"`
	Workers   int    `json:"workers"`
	Devices   int    `json:"devices"`
	BatchSize int    `json:"batchSize"`
	Policy    string `json:"policy"`
	// Synchronized is true when Ray takes the synchronising path.
	Synchronized bool `json:"synchronized"`
	// SplitDropped rows never reach a worker: Ray Train's equal split
	// drops Rows mod Workers.
	SplitDropped int `json:"splitDropped"`
	// Groups are the hosts' epochs; empty when Rows is unknown.
	Groups []HostGroup `json:"groups,omitempty"`
	// RowsDropped is the rows of one epoch left out, for the nominal case
	// when a group has Bounds. Split (the default): rows no host yields,
	// the split's remainder plus every host's batching losses (the shards
	// are disjoint, so these add up). NotSplit: every host reads all Rows,
	// so it is the rows one host does not yield (the most over hosts), not
	// a sum over hosts. Either way RowsDropped/Rows is the share of the
	// dataset a host's training loop misses per epoch (split: that no
	// host's loop sees), the share Drop's warning reports.
	RowsDropped int `json:"rowsDropped"`
	// PadRows is the padding rows yielded in one epoch over all hosts.
	PadRows int `json:"padRows"`
	// Fails is true when some host is certain not to complete the first
	// epoch; MayFail when one may not, depending on Bounds.
	Fails    bool                `json:"fails"`
	MayFail  bool                `json:"mayFail,omitempty"`
	Findings []placement.Finding `json:"findings,omitempty"`
}

// devices resolves the JAX devices of one host.
func (h Hosts) devices(p *field.Path) (int, string, field.ErrorList) {
	if h.LocalDevices < 0 {
		return 0, "", field.ErrorList{field.Invalid(p.Child("localDevices"), h.LocalDevices, "must be positive, or 0 for the catalog's count")}
	}
	if h.Accelerator == "" {
		if h.ChipsPerHost != 0 {
			return 0, "", field.ErrorList{field.Forbidden(p.Child("chipsPerHost"), "applies only with a TPU accelerator")}
		}
		if h.LocalDevices > 0 {
			return h.LocalDevices, fmt.Sprintf("localDevices: %d on each CPU worker", h.LocalDevices), nil
		}
		return 1, "one CPU device per worker", nil
	}
	g, e := tpu.ResolveGeneration(h.Accelerator, p.Child("accelerator"))
	if e != nil {
		return 0, "", field.ErrorList{e}
	}
	chips := h.ChipsPerHost
	if chips == 0 {
		if len(g.ChipsPerHostOptions) != 1 {
			return 0, "", field.ErrorList{field.Required(p.Child("chipsPerHost"),
				fmt.Sprintf("%s hosts come with %v chips; say which", g.Name, g.ChipsPerHostOptions))}
		}
		chips = g.ChipsPerHostOptions[0]
	}
	if !slices.Contains(g.ChipsPerHostOptions, chips) {
		return 0, "", field.ErrorList{field.NotSupported(p.Child("chipsPerHost"), fmt.Sprint(chips), intStrings(g.ChipsPerHostOptions))}
	}
	why := fmt.Sprintf("one %s host of %d chips × %d JAX devices per chip", g.Name, chips, g.DevicesPerChip)
	if h.LocalDevices > 0 {
		return h.LocalDevices, fmt.Sprintf("localDevices: %d on each %s host, in place of its %d", h.LocalDevices, g.Name, chips*g.DevicesPerChip), nil
	}
	return chips * g.DevicesPerChip, why, nil
}

func intStrings(v []int) []string {
	out := make([]string, len(v))
	for i, n := range v {
		out[i] = fmt.Sprint(n)
	}
	return out
}

// Predict checks it against the hosts and, when the dataset's row count is
// known before running (Range, FromItems, ReadParquet over local files,
// and row-keeping steps), predicts
// every host's first epoch under Ray Train's sharding. p is the path of the
// iterator options (findings and errors point below it).
//
// With a local shuffle, Predict models Ray's shuffling batcher. What it
// says is exact unless the buffer is under 2×BatchSize-2 rows, the shard
// is large enough for a short batch before the end (over BatchSize plus
// 1.5 buffers), and the blocks are not known before running: a dataset
// split over several workers (the blocks each host gets depend on timing;
// one worker gets the dataset's own blocks), Ray's choice of
// block count, or a range whose shorter last block may arrive anywhere.
// Then the group's Batches is a nominal case and Bounds says what may
// happen; a warning at localShuffleBufferSize says it too.
//
// Errors: a batch size that does not divide by the host's JAX devices; a
// Raise certain to fail at the end of the first epoch, or a local shuffle
// certain to hand out a short batch the devices cannot split (unless
// AllowRaise); an invalid option. Warnings and notes are in
// Prediction.Findings.
func Predict(p *field.Path, ds Dataset, it IterJaxBatches, hosts Hosts) (*Prediction, field.ErrorList) {
	kw, errs := it.compile(p)
	if hosts.Workers < 1 {
		errs = append(errs, field.Invalid(p.Child("workers"), hosts.Workers, "must be at least 1"))
	} else if hosts.Workers > placement.MaxWorkers {
		errs = append(errs, field.TooMany(p.Child("workers"), hosts.Workers, placement.MaxWorkers, placement.SourceWorkers))
	}
	d, why, herrs := hosts.devices(p)
	errs = append(errs, herrs...)
	c, derrs := ds.compile(p.Child("dataset"))
	if len(errs) > 0 {
		return nil, errs
	}
	if len(derrs) > 0 {
		return nil, derrs
	}
	B, W := kw.BatchSize, hosts.Workers
	pr := &Prediction{Rows: c.Rows, Workers: W, Devices: d, BatchSize: B, Policy: kindOf(it.Ragged).String()}
	bp := p.Child("batchSize")
	if B%d != 0 {
		try := fmt.Sprintf("%d or %d", B/d*d, (B/d+1)*d)
		if B < d {
			try = fmt.Sprint(d)
		}
		return nil, field.ErrorList{field.Invalid(bp, B, fmt.Sprintf(
			"must divide by the %d JAX devices of one host (%s); iter_jax_batches raises ValueError before the first batch; try %s",
			d, why, try))}
	}
	processes := 1
	if hosts.Accelerator != "" {
		processes = W
	}
	pr.Synchronized = it.SynchronizeBatches && processes > 1
	note := func(s placement.Severity, code string, path *field.Path, format string, a ...any) {
		pr.Findings = append(pr.Findings, placement.Finding{Severity: s, Code: code, Field: path.String(), Message: fmt.Sprintf(format, a...)})
	}
	b := batchmodel.Batching{BatchSize: B, Devices: d, Policy: modelPolicy(it.Ragged), Sync: pr.Synchronized, Lookahead: kw.PrefetchBatches,
		LocalShuffleBufferSize: it.LocalShuffleBufferSize}
	if c.Rows < 0 {
		syncNotes(note, p, it, hosts, processes, kw.PrefetchBatches, true)
		note(placement.SeverityInfo, CodeRowsUnknown, p.Child("dataset"), "row count unknown before running (a file source or a row-changing step): only the batch size was checked; Ray Train's split will drop rows mod %d", W)
		if sb := batchmodel.NewShuffleBuffer(B, it.LocalShuffleBufferSize); it.LocalShuffleBufferSize > 0 && sb.Y <= B-2 {
			note(placement.SeverityWarning, CodeShuffleShortBatches, p.Child("localShuffleBufferSize"), "may hand out short batches of %d to %d rows before the end of the epoch, depending on the sizes and order of the blocks; set it to at least %d (2×batchSize-2) to rule that out",
				sb.Y+1, B-1, MinLocalShuffleBuffer(B))
		}
		return pr, nil
	}
	shard := c.Rows
	if !hosts.NotSplit {
		shard = c.Rows / W
		pr.SplitDropped = c.Rows % W
	}
	// A split over one worker hands it every block unchanged
	// (OutputSplitter with n=1 dispatches each bundle as it comes and has
	// nothing to equalise), so its blocks are the dataset's, as unsplit.
	g := predictGroup(ds, shard, W, !hosts.NotSplit && W > 1, b)
	syncNotes(note, p, it, hosts, processes, kw.PrefetchBatches, g.Bounds == nil)
	if pr.SplitDropped > 0 {
		note(placement.SeverityWarning, CodeSplitDropsRows, p.Child("dataset"), "Ray Train's streaming_split(equal=True) gives each of %d workers %d rows and silently drops %d of %d rows (%d mod %d)",
			W, shard, pr.SplitDropped, c.Rows, c.Rows, W)
	}
	one := g.Batches
	pr.Groups = []HostGroup{g}
	pr.RowsDropped = one.RowsDropped
	if !hosts.NotSplit {
		pr.RowsDropped = pr.SplitDropped + W*one.RowsDropped
	}
	pr.PadRows = W * one.PadRows
	if g.Bounds == nil {
		pr.Fails = one.Outcome != Completes
	} else {
		pr.Fails = !slices.Contains(g.Bounds.Outcomes, Completes)
		pr.MayFail = !pr.Fails && slices.ContainsFunc(g.Bounds.Outcomes, func(o Outcome) bool { return o != Completes })
	}
	plain := modelEpochs([]int{shard}, batchmodel.Batching{BatchSize: B, Devices: d, Policy: modelPolicy(it.Ragged), Sync: pr.Synchronized, Lookahead: kw.PrefetchBatches})[0]
	byShuffle := it.LocalShuffleBufferSize > 0 && g.Bounds == nil && !sameBatches(one, plain)
	full, r := shard/B, shard%B
	switch {
	case byShuffle:
		errs = append(errs, shuffleFindings(note, p, it, g, shard, B, d)...)
	case pr.Fails && !it.AllowRaise:
		errs = append(errs, field.Invalid(p.Child("ragged"), "Raise", fmt.Sprintf(
			"certain to fail at the end of the first epoch: each of %d hosts gets %d rows = %d full batches of %d and a last batch of %d rows, "+
				"which does not divide by the %d JAX devices of a host, so iter_jax_batches raises ValueError after batch %d; "+
				"use Drop (loses %d rows per host) or Pad (adds %d padding rows per host), change batchSize or the row count, or set allowRaise",
			W, shard, full, B, r, d, full, r, B-r)))
	case pr.Fails:
		note(placement.SeverityWarning, CodeRaiseFails, p.Child("ragged"), "Raise fails at the end of the first epoch: last batch of %d rows on each of %d hosts does not divide by %d devices (allowed by allowRaise)", r, W, d)
	}
	if g.Bounds != nil {
		boundsFinding(note, p, g.Bounds, B, d, kindOf(it.Ragged))
	}
	if kindOf(it.Ragged) == kindDrop && c.Rows > 0 && one.Outcome == Completes {
		limit := it.MaxDropFraction
		if limit == 0 {
			limit = DefaultMaxDropFraction
		}
		if frac := float64(pr.RowsDropped) / float64(c.Rows); frac > limit {
			if hosts.NotSplit {
				note(placement.SeverityWarning, CodeDropDiscards, p.Child("ragged"), "Drop discards %d of %d rows per host per epoch (%.1f%%, above %.1f%%): every host reads the whole dataset and drops its last batch of %d rows",
					pr.RowsDropped, c.Rows, 100*frac, 100*limit, one.RowsDropped)
			} else {
				note(placement.SeverityWarning, CodeDropDiscards, p.Child("ragged"), "Drop discards %d of %d rows per epoch (%.1f%%, above %.1f%%): %d per host from the last batch of %d rows, plus %d from the split",
					pr.RowsDropped, c.Rows, 100*frac, 100*limit, one.RowsDropped, r, pr.SplitDropped)
			}
		}
	}
	if kindOf(it.Ragged) == kindPad && plain.PadRows > 0 && !byShuffle {
		note(placement.SeverityInfo, CodePadRows, p.Child("ragged"), "Pad adds %d unmasked padding rows per host to the last batch of %d rows; use a value the train step recognises", plain.PadRows, r)
	}
	if len(errs) > 0 {
		return pr, errs
	}
	return pr, nil
}

// syncNotes says when synchronizeBatches has no effect; exact is false
// when the hosts' batches may differ (a local shuffle over blocks fixed
// only at run time).
func syncNotes(note func(placement.Severity, string, *field.Path, string, ...any), p *field.Path, it IterJaxBatches, hosts Hosts, processes, prefetch int, exact bool) {
	if !it.SynchronizeBatches {
		return
	}
	sp := p.Child("synchronizeBatches")
	switch {
	case processes == 1 && hosts.Workers == 1:
		note(placement.SeverityInfo, CodeSyncNoEffect, sp, "has no effect: one worker, so jax.process_count() is 1")
	case processes == 1:
		note(placement.SeverityInfo, CodeSyncNoEffect, sp, "has no effect: CPU workers do not initialise jax.distributed, so every worker has jax.process_count() 1")
	case !exact:
	case !hosts.NotSplit:
		note(placement.SeverityInfo, CodeSyncNoEffect, sp, "changes no outcome here: Ray Train's equal split gives every host the same rows, so batch counts and sizes already agree; it costs one all-gather per %s", batchesWord(prefetch))
	default:
		note(placement.SeverityInfo, CodeSyncNoEffect, sp, "changes no outcome here: every host iterates the whole dataset, so batch counts and sizes already agree; it costs one all-gather per %s", batchesWord(prefetch))
	}
}

// batchesWord is "batch" for 1 and "N batches" otherwise.
func batchesWord(n int) string {
	if n == 1 {
		return "batch"
	}
	return fmt.Sprintf("%d batches", n)
}
