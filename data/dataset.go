package data

import (
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayruntime"
)

// Dataset is an immutable Ray Data pipeline: a source, the steps applied to
// it in order, and optionally a sink. Every method returns a new Dataset
// that shares no map or slice with its receiver, so a Dataset can be
// branched freely:
//
//	base := data.From(data.ReadParquet{Paths: []string{"gs://b/in"}})
//	small := base.Filter(data.Filter{Expr: "size < 10"})
//	big := base.Filter(data.Filter{Expr: "size >= 10"}) // base is unchanged
//
// The zero Dataset has no source; compiling it reports that.
type Dataset struct {
	source Source
	steps  []Step
	sink   Sink
}

// Step is one transform of a [Dataset]: [MapBatches], [Filter],
// [RandomShuffle] or [Repartition]. The set is closed.
type Step interface {
	compile(p *field.Path) (rayruntime.Op, field.ErrorList)
	// keepsRows reports whether the step keeps the number of rows.
	keepsRows() bool
	clone() Step
}

// Sink is where a [Dataset] is written: [WriteParquet] or [WriteJSON].
type Sink interface {
	compile(p *field.Path) (rayruntime.Op, field.ErrorList)
	clone() Sink
}

// From starts a dataset at src. The source is copied: later changes to the
// caller's slices or maps do not reach the dataset.
func From(src Source) Dataset {
	if src == nil {
		return Dataset{}
	}
	return Dataset{source: src.clone()}
}

// with returns a copy of d with s appended.
func (d Dataset) with(s Step) Dataset {
	steps := make([]Step, len(d.steps), len(d.steps)+1)
	copy(steps, d.steps)
	d.steps = append(steps, s.clone())
	return d
}

// MapBatches mirrors Dataset.map_batches.
func (d Dataset) MapBatches(m MapBatches) Dataset { return d.with(m) }

// Filter mirrors Dataset.filter.
func (d Dataset) Filter(f Filter) Dataset { return d.with(f) }

// RandomShuffle mirrors Dataset.random_shuffle.
func (d Dataset) RandomShuffle(s RandomShuffle) Dataset { return d.with(s) }

// Repartition mirrors Dataset.repartition.
func (d Dataset) Repartition(r Repartition) Dataset { return d.with(r) }

// Write returns d with its sink set to s (replacing any earlier sink):
// d.Write(data.WriteParquet{Path: "gs://b/out"}) mirrors
// ds.write_parquet("gs://b/out").
func (d Dataset) Write(s Sink) Dataset {
	d.steps = slices.Clone(d.steps)
	if s == nil {
		d.sink = nil
	} else {
		d.sink = s.clone()
	}
	return d
}

// Steps returns the number of transform steps.
func (d Dataset) Steps() int { return len(d.steps) }

// HasSink reports whether d ends in a write.
func (d Dataset) HasSink() bool { return d.sink != nil }

// CompiledDataset is a compiled dataset: the calls the launcher makes
// (the source op, then each step's op in order, then the sink op, if
// any) and what is known of its rows.
type CompiledDataset struct {
	rayruntime.Dataset
	// Rows is the number of rows the dataset yields when it is known
	// before running (a range or from_items source and only steps that
	// keep the row count), else -1. Not read by the launcher.
	Rows int `json:"-"`
}

// compile validates d; paths are source, steps[i] and sink below p.
func (d Dataset) compile(p *field.Path) (CompiledDataset, field.ErrorList) {
	out := CompiledDataset{Dataset: rayruntime.Dataset{Steps: []rayruntime.Op{}}, Rows: -1}
	var errs field.ErrorList
	if d.source == nil {
		errs = append(errs, field.Required(p.Child("source"), "a source: Range, FromItems, ReadParquet, ReadJSON or ReadCSV"))
	} else {
		op, rows, serrs := d.source.compile(p.Child("source"))
		out.Source, out.Rows = op, rows
		errs = append(errs, serrs...)
	}
	for i, s := range d.steps {
		op, serrs := s.compile(p.Child("steps").Index(i))
		errs = append(errs, serrs...)
		out.Steps = append(out.Steps, op)
		if !s.keepsRows() {
			out.Rows = -1
		}
	}
	if d.sink != nil {
		op, serrs := d.sink.compile(p.Child("sink"))
		errs = append(errs, serrs...)
		out.Sink = &op
	}
	return out, errs
}

// KnownRows returns the number of rows d yields when it is known without
// running it: a Range or FromItems source followed only by steps that keep
// the row count. ok is false otherwise.
func (d Dataset) KnownRows() (rows int, ok bool) {
	c, errs := d.compile(field.NewPath("dataset"))
	if len(errs) > 0 || c.Rows < 0 {
		return 0, false
	}
	return c.Rows, true
}
