package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// Source is where a [Dataset] reads from: [Range], [FromItems],
// [ReadParquet], [ReadJSON] or [ReadCSV]. The set is closed.
type Source interface {
	// compile validates the source and returns its launcher op, and the
	// number of rows it yields when that is known before running (-1
	// otherwise).
	compile(p *field.Path) (rayruntime.Op, int, field.ErrorList)
	// clone returns a copy that shares no map or slice with the receiver.
	clone() Source
}

// Range mirrors ray.data.range(n): one int64 column "id" holding 0..N-1.
type Range struct {
	// N is the number of rows. Required: 0 is an empty dataset, a
	// negative count is an error.
	N int
	// OverrideNumBlocks sets the number of output blocks. Optional.
	// Default: Ray's choice.
	OverrideNumBlocks int
}

// FromItems mirrors ray.data.from_items(items): a row per item. Dict items
// give one column per key; other items give one column "item".
type FromItems struct {
	// Items are the rows; each must marshal to JSON. Required (an empty
	// list is an empty dataset).
	Items []any
	// OverrideNumBlocks sets the number of output blocks. Optional.
	OverrideNumBlocks int
}

// ReadParquet mirrors ray.data.read_parquet. When every path is a local
// file or directory present where the pipeline is compiled, the row count
// comes from the files' footers (see [ParquetRows]), so [Predict] can
// predict every host's batches; otherwise it is unknown until Ray runs.
type ReadParquet struct {
	// Paths are files or directories (local, gs://, s3://). Required.
	Paths []string
	// Columns to read. Optional. Default: all.
	Columns []string
	// OverrideNumBlocks sets the number of output blocks. Optional.
	OverrideNumBlocks int
}

// ReadJSON mirrors ray.data.read_json.
type ReadJSON struct {
	// Paths are files or directories. Required.
	Paths []string
	// Lines reads newline-delimited JSON (JSONL). Optional. Default: false.
	Lines bool
	// OverrideNumBlocks sets the number of output blocks. Optional.
	OverrideNumBlocks int
}

// ReadCSV mirrors ray.data.read_csv.
type ReadCSV struct {
	// Paths are files or directories. Required.
	Paths []string
	// OverrideNumBlocks sets the number of output blocks. Optional.
	OverrideNumBlocks int
}

// newOp is the Ray Data call name(**kwargs).
func newOp(name string, kwargs any) rayruntime.Op {
	b, err := marshal(kwargs)
	if err != nil {
		// Kwargs are raytpu's own structs of validated plain values.
		panic(fmt.Sprintf("data: encoding %s kwargs: %v", name, err))
	}
	return rayruntime.Op{Op: name, Kwargs: b}
}

// marshal is json.Marshal without HTML escaping, so that expressions such
// as "x > 1" read as written in the plan.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func checkBlocks(p *field.Path, n int) field.ErrorList {
	if n < 0 {
		return field.ErrorList{field.Invalid(p.Child("overrideNumBlocks"), n, "must be positive, or 0 for Ray's choice")}
	}
	return nil
}

func checkPaths(p *field.Path, paths []string) field.ErrorList {
	if len(paths) == 0 {
		return field.ErrorList{field.Required(p.Child("paths"), "at least one file or directory")}
	}
	var errs field.ErrorList
	for i, s := range paths {
		if s == "" {
			errs = append(errs, field.Required(p.Child("paths").Index(i), "a file or directory"))
		}
	}
	return errs
}

func (r Range) compile(p *field.Path) (rayruntime.Op, int, field.ErrorList) {
	errs := checkBlocks(p, r.OverrideNumBlocks)
	if r.N < 0 {
		errs = append(errs, field.Invalid(p.Child("n"), r.N, "cannot be negative"))
	} else if r.N > placement.MaxRows {
		errs = append(errs, field.TooMany(p.Child("n"), r.N, placement.MaxRows, placement.SourceRows))
	}
	return newOp("range", struct {
		N                 int `json:"n"`
		OverrideNumBlocks int `json:"override_num_blocks,omitempty"`
	}{r.N, r.OverrideNumBlocks}), max(r.N, 0), errs
}

func (r Range) clone() Source { return r }

func (f FromItems) compile(p *field.Path) (rayruntime.Op, int, field.ErrorList) {
	errs := checkBlocks(p, f.OverrideNumBlocks)
	items := make([]json.RawMessage, 0, len(f.Items))
	for i, it := range f.Items {
		b, err := json.Marshal(it)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("items").Index(i), fmt.Sprintf("%T", it), "must marshal to JSON: "+err.Error()))
			continue
		}
		items = append(items, b)
	}
	return newOp("from_items", struct {
		Items             []json.RawMessage `json:"items"`
		OverrideNumBlocks int               `json:"override_num_blocks,omitempty"`
	}{items, f.OverrideNumBlocks}), len(f.Items), errs
}

// clone copies the item list and, through a JSON round trip, every item,
// so that later changes to the caller's values do not reach the dataset.
func (f FromItems) clone() Source {
	out := f
	out.Items = make([]any, len(f.Items))
	for i, it := range f.Items {
		b, err := json.Marshal(it)
		if err != nil {
			out.Items[i] = it // reported at compile time
			continue
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			out.Items[i] = it
			continue
		}
		out.Items[i] = v
	}
	return out
}

func (r ReadParquet) compile(p *field.Path) (rayruntime.Op, int, field.ErrorList) {
	errs := append(checkPaths(p, r.Paths), checkBlocks(p, r.OverrideNumBlocks)...)
	for i, c := range r.Columns {
		if c == "" {
			errs = append(errs, field.Required(p.Child("columns").Index(i), "a column name"))
		}
	}
	return newOp("read_parquet", struct {
		Paths             []string `json:"paths"`
		Columns           []string `json:"columns,omitempty"`
		OverrideNumBlocks int      `json:"override_num_blocks,omitempty"`
	}{r.Paths, r.Columns, r.OverrideNumBlocks}), r.rows(errs), errs
}

// rows counts the rows from the files' footers when every path is local
// and present on this machine (see ParquetRows), else -1. It reads nothing
// when the source is already invalid.
func (r ReadParquet) rows(errs field.ErrorList) int {
	if len(errs) > 0 {
		return -1
	}
	n, err := ParquetRows(r.Paths...)
	if err != nil {
		return -1
	}
	return n
}

func (r ReadParquet) clone() Source {
	r.Paths, r.Columns = slices.Clone(r.Paths), slices.Clone(r.Columns)
	return r
}

func (r ReadJSON) compile(p *field.Path) (rayruntime.Op, int, field.ErrorList) {
	errs := append(checkPaths(p, r.Paths), checkBlocks(p, r.OverrideNumBlocks)...)
	return newOp("read_json", struct {
		Paths             []string `json:"paths"`
		Lines             bool     `json:"lines,omitempty"`
		OverrideNumBlocks int      `json:"override_num_blocks,omitempty"`
	}{r.Paths, r.Lines, r.OverrideNumBlocks}), -1, errs
}

func (r ReadJSON) clone() Source {
	r.Paths = slices.Clone(r.Paths)
	return r
}

func (r ReadCSV) compile(p *field.Path) (rayruntime.Op, int, field.ErrorList) {
	errs := append(checkPaths(p, r.Paths), checkBlocks(p, r.OverrideNumBlocks)...)
	return newOp("read_csv", struct {
		Paths             []string `json:"paths"`
		OverrideNumBlocks int      `json:"override_num_blocks,omitempty"`
	}{r.Paths, r.OverrideNumBlocks}), -1, errs
}

func (r ReadCSV) clone() Source {
	r.Paths = slices.Clone(r.Paths)
	return r
}
