package data

import "github.com/raytpu/raytpu/internal/batchmodel"

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

// HostBatches is Predict's account of one host's first epoch.
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

// hostBatchesOf is the model's account of a host's epoch as Predict
// reports it.
func hostBatchesOf(m batchmodel.HostBatches) HostBatches {
	return HostBatches{
		Rows: m.Rows, Runs: runsOf(m.Runs), Batches: m.Batches, RowsYielded: m.RowsYielded,
		RowsDropped: m.RowsDropped, PadRows: m.PadRows, Outcome: Outcome(m.Outcome), AtBatch: m.AtBatch, Error: m.Error,
	}
}

// runsOf is the model's runs as Predict reports them.
func runsOf(runs []batchmodel.Run) []Run {
	if runs == nil {
		return nil
	}
	out := make([]Run, len(runs))
	for i, r := range runs {
		out[i] = Run(r)
	}
	return out
}

// modelPolicy is the model's name for a ragged policy.
func modelPolicy(r RaggedPolicy) batchmodel.Policy {
	switch kindOf(r) {
	case kindDrop:
		return batchmodel.Drop
	case kindPad:
		return batchmodel.Pad
	}
	return batchmodel.Raise
}

// modelEpochs is batchmodel.Epochs as Predict reports it.
func modelEpochs(shards []int, b batchmodel.Batching) []HostBatches {
	return convertAll(batchmodel.Epochs(shards, b))
}

// modelEpochsOfBlocks is batchmodel.EpochsOfBlocks as Predict reports it.
func modelEpochsOfBlocks(blocks [][]int, b batchmodel.Batching) []HostBatches {
	return convertAll(batchmodel.EpochsOfBlocks(blocks, b))
}

func convertAll(ms []batchmodel.HostBatches) []HostBatches {
	out := make([]HostBatches, len(ms))
	for i, m := range ms {
		out[i] = hostBatchesOf(m)
	}
	return out
}
