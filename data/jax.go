package data

import (
	"maps"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// DefaultJaxBatchSize is iter_jax_batches' default batch_size (rows per host).
const DefaultJaxBatchSize = 256

// DefaultMaxDropFraction is the share of rows a Drop may discard before
// Predict warns.
const DefaultMaxDropFraction = 0.05

// IterJaxBatches mirrors DataIterator.iter_jax_batches (Ray 2.60) option for
// option, except collate_fn (a Python object) and with drop_last and
// paddings folded into one typed choice, Ragged.
type IterJaxBatches struct {
	// BatchSize is the rows of every batch on each host (not global). It
	// must divide by the JAX devices of one host. Optional. Default: 256.
	BatchSize int
	// Ragged is what happens to a host's last, short batch: Drop{},
	// Pad{...} or Raise{}. Optional. Default: Raise{} (Ray's drop_last=False,
	// paddings=None: a short batch passes if it divides by the local
	// device count, else iteration raises ValueError).
	Ragged RaggedPolicy
	// DType casts every column (dtypes=<one dtype>), e.g. "float32".
	// Optional. Exclusive with DTypes.
	DType string
	// DTypes casts named columns (dtypes={column: dtype}). Optional.
	DTypes map[string]string
	// PrefetchBatches is how many batches to fetch ahead; with
	// SynchronizeBatches it is also the synchronisation window. Optional.
	// Default: 1.
	PrefetchBatches int
	// LocalShuffleBufferSize turns on the local shuffle with a buffer of at
	// least this many rows (Ray raises it to BatchSize). Below
	// 2×BatchSize-2 rows ([MinLocalShuffleBuffer]) Ray's shuffling batcher
	// can hand out short batches before the end of the epoch, which Ragged
	// does not drop; [Predict] says when. Optional. Default: no shuffle.
	LocalShuffleBufferSize int
	// LocalShuffleSeed seeds the local shuffle. Optional; needs
	// LocalShuffleBufferSize.
	LocalShuffleSeed *int
	// SynchronizeBatches makes hosts agree on batch count and shape each
	// step (an all-gather per window). Optional. Default: false.
	SynchronizeBatches bool

	// AllowRaise compiles options that Predict finds certain to fail in the
	// first epoch: a Raise on the last batch, or a short batch of the local
	// shuffle (raytpu's opt-out; not a Ray option).
	// Optional. Default: false.
	AllowRaise bool
	// MaxDropFraction is the share of rows a Drop may discard (per epoch,
	// counting the rows the split drops; per host when every worker reads
	// the whole dataset, see Prediction.RowsDropped) before Predict warns (raytpu's;
	// not a Ray option). Optional. Default: DefaultMaxDropFraction.
	MaxDropFraction float64
}

// RaggedPolicy is iter_jax_batches' treatment of a short final batch:
// [Drop], [Pad] or [Raise]. The set is closed.
type RaggedPolicy interface {
	ragged() raggedKind
	clone() RaggedPolicy
}

// Drop drops each host's short last batch (drop_last=True). With
// SynchronizeBatches, iteration also stops on every host as soon as one
// host runs out.
type Drop struct{}

// Pad pads each host's short last batch up to BatchSize (paddings=...).
// With SynchronizeBatches, a host that runs out early yields dummy batches
// of padding until all are done. Padded rows are not masked: pick values
// the train step can recognise.
type Pad struct {
	// Value pads every column (paddings=<scalar>). Used when Columns is nil.
	Value float64
	// Columns pads column by column (paddings={column: value}); it must
	// name every column of the batch, or Ray raises KeyError.
	Columns map[string]float64
}

// Raise yields a short last batch as it is, and fails when its size does
// not divide by the local device count (drop_last=False, paddings=None).
type Raise struct{}

type raggedKind int

const (
	kindRaise raggedKind = iota
	kindDrop
	kindPad
)

func (k raggedKind) String() string {
	return [...]string{"Raise", "Drop", "Pad"}[k]
}

func (Drop) ragged() raggedKind     { return kindDrop }
func (d Drop) clone() RaggedPolicy  { return d }
func (Raise) ragged() raggedKind    { return kindRaise }
func (r Raise) clone() RaggedPolicy { return r }
func (Pad) ragged() raggedKind      { return kindPad }
func (p Pad) clone() RaggedPolicy   { p.Columns = maps.Clone(p.Columns); return p }
func kindOf(r RaggedPolicy) raggedKind {
	if r == nil {
		return kindRaise
	}
	return r.ragged()
}

// DTypeNames returns the JAX dtype names accepted in DType and DTypes, in
// order; a fresh slice each call, so no caller can change what validation
// accepts.
func DTypeNames() []string { return slices.Clone(dtypeNames) }

var dtypeNames = []string{
	"bfloat16", "bool", "complex128", "complex64", "float16", "float32", "float64",
	"float8_e4m3fn", "float8_e5m2", "int16", "int32", "int4", "int64", "int8",
	"uint16", "uint32", "uint4", "uint64", "uint8",
}

// batchSize is BatchSize with its default.
func (it IterJaxBatches) batchSize() int {
	if it.BatchSize == 0 {
		return DefaultJaxBatchSize
	}
	return it.BatchSize
}

func (it IterJaxBatches) lookahead() int { return max(it.PrefetchBatches, 1) }

// compile checks what can be checked without the hosts and returns the
// keyword arguments.
func (it IterJaxBatches) compile(p *field.Path) (rayruntime.IterJaxBatchesKwargs, field.ErrorList) {
	var errs field.ErrorList
	kw := rayruntime.IterJaxBatchesKwargs{
		BatchSize: it.batchSize(), PrefetchBatches: it.lookahead(),
		SynchronizeBatches: it.SynchronizeBatches,
		LocalShuffleSeed:   it.LocalShuffleSeed,
	}
	if it.BatchSize < 0 {
		errs = append(errs, field.Invalid(p.Child("batchSize"), it.BatchSize, "must be positive (rows per host), or 0 for 256"))
	} else if it.BatchSize > placement.MaxBatchSize {
		errs = append(errs, field.TooMany(p.Child("batchSize"), it.BatchSize, placement.MaxBatchSize, placement.SourceBatchSize))
	}
	if it.PrefetchBatches < 0 {
		errs = append(errs, field.Invalid(p.Child("prefetchBatches"), it.PrefetchBatches, "must be positive, or 0 for 1"))
	} else if it.PrefetchBatches > placement.MaxPrefetchBatches {
		errs = append(errs, field.TooMany(p.Child("prefetchBatches"), it.PrefetchBatches, placement.MaxPrefetchBatches, placement.SourcePrefetchBatches))
	}
	if it.LocalShuffleBufferSize < 0 {
		errs = append(errs, field.Invalid(p.Child("localShuffleBufferSize"), it.LocalShuffleBufferSize, "must be positive, or 0 for no local shuffle"))
	} else if it.LocalShuffleBufferSize > placement.MaxRows {
		errs = append(errs, field.TooMany(p.Child("localShuffleBufferSize"), it.LocalShuffleBufferSize, placement.MaxRows, placement.SourceRows))
	} else if it.LocalShuffleBufferSize > 0 {
		n := it.LocalShuffleBufferSize
		kw.LocalShuffleBufferSize = &n
	}
	if it.LocalShuffleSeed != nil && it.LocalShuffleBufferSize == 0 {
		errs = append(errs, field.Forbidden(p.Child("localShuffleSeed"), "seeds the local shuffle; set localShuffleBufferSize too"))
	}
	if it.MaxDropFraction < 0 || it.MaxDropFraction > 1 {
		errs = append(errs, field.Invalid(p.Child("maxDropFraction"), it.MaxDropFraction, "must lie in [0, 1], or 0 for the default 0.05"))
	}
	switch {
	case it.DType != "" && len(it.DTypes) > 0:
		errs = append(errs, field.Forbidden(p.Child("dTypes"), "set dType (every column) or dTypes (by column), not both"))
	case it.DType != "":
		if !slices.Contains(dtypeNames, it.DType) {
			errs = append(errs, field.NotSupported(p.Child("dType"), it.DType, DTypeNames()))
		}
		kw.DTypes = it.DType
	case len(it.DTypes) > 0:
		for _, c := range slices.Sorted(maps.Keys(it.DTypes)) {
			if v := it.DTypes[c]; !slices.Contains(dtypeNames, v) {
				errs = append(errs, field.NotSupported(p.Child("dTypes").Key(c), v, DTypeNames()))
			}
		}
		kw.DTypes = it.DTypes
	}
	switch r := it.Ragged.(type) {
	case Drop:
		kw.DropLast = true
	case Pad:
		if len(r.Columns) > 0 {
			kw.Paddings = r.Columns
		} else {
			kw.Paddings = r.Value
		}
	}
	return kw, errs
}

// Describe names a ragged policy: "Drop", "Pad" or "Raise" (nil is Raise).
func Describe(r RaggedPolicy) string { return kindOf(r).String() }
