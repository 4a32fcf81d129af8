package cli

// The dataset file `raytpu data plan` reads: its fields, how it compiles
// to data.Predict's arguments, and how Predict's paths are spelled as
// the file spells them.

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

// dataFile is a dataset input file: the dataset's source, how the train
// workers iterate it, and the hosts they run on. YAML (or JSON) with these
// names; a key it does not have is an error naming it.
//
//	source:
//	  range: {n: 1000}         # or fromItems: {items: [...]},
//	                           # or readParquet: {paths: [./data]} (rows from the
//	                           # footers; relative paths are relative to the file)
//	iter:
//	  batchSize: 64            # rows per host per batch
//	  ragged: pad              # drop | pad | raise
//	  padValue: -1             # or padColumns: {id: -1, x: 0}
//	  prefetchBatches: 1
//	  localShuffleBufferSize: 512   # local shuffle; below 2×batchSize-2 rows
//	  localShuffleSeed: 7           # it can hand out short batches mid-epoch
//	  dType: float32           # or dTypes: {x: bfloat16}
//	  synchronizeBatches: true
//	hosts:
//	  workers: 2
//	  accelerator: v4
//	  notSplit: false          # true: every worker reads the whole dataset
type dataFile struct {
	Name   string     `json:"name"`
	Source dataSource `json:"source"`
	Iter   dataIter   `json:"iter"`
	Hosts  dataHosts  `json:"hosts"`
}

// dataHosts is data.Hosts as the file spells it.
type dataHosts struct {
	Workers      int    `json:"workers"`
	Accelerator  string `json:"accelerator"`
	ChipsPerHost int    `json:"chipsPerHost"`
	LocalDevices int    `json:"localDevices"`
	NotSplit     bool   `json:"notSplit"`
}

func (h dataHosts) hosts() data.Hosts { return data.Hosts(h) }

// dataSource holds exactly one source.
type dataSource struct {
	Range       *dataRange       `json:"range"`
	FromItems   *dataFromItems   `json:"fromItems"`
	ReadParquet *dataReadParquet `json:"readParquet"`
}

// dataRange, dataFromItems and dataReadParquet are data's sources as the
// file spells them.
type dataRange struct {
	N                 int `json:"n"`
	OverrideNumBlocks int `json:"overrideNumBlocks"`
}

type dataFromItems struct {
	Items             []any `json:"items"`
	OverrideNumBlocks int   `json:"overrideNumBlocks"`
}

type dataReadParquet struct {
	Paths             []string `json:"paths"`
	Columns           []string `json:"columns"`
	OverrideNumBlocks int      `json:"overrideNumBlocks"`
}

// dataIter is data.IterJaxBatches with the ragged policy spelled out.
type dataIter struct {
	BatchSize              int                `json:"batchSize"`
	Ragged                 string             `json:"ragged"`
	PadValue               float64            `json:"padValue"`
	PadColumns             map[string]float64 `json:"padColumns"`
	DType                  string             `json:"dType"`
	DTypes                 map[string]string  `json:"dTypes"`
	PrefetchBatches        int                `json:"prefetchBatches"`
	LocalShuffleBufferSize int                `json:"localShuffleBufferSize"`
	LocalShuffleSeed       *int               `json:"localShuffleSeed"`
	SynchronizeBatches     bool               `json:"synchronizeBatches"`
	AllowRaise             bool               `json:"allowRaise"`
	MaxDropFraction        float64            `json:"maxDropFraction"`
}

// raggedNames are the values of iter.ragged.
var raggedNames = []string{"drop", "pad", "raise"}

var dataPath = field.NewPath("pipeline")

// compile turns the file into Predict's arguments, reporting every problem.
func (f dataFile) compile() (data.Dataset, data.IterJaxBatches, string, field.ErrorList) {
	var errs field.ErrorList
	var src data.Source
	var desc string
	n := 0
	sp := dataPath.Child("source")
	if s := f.Source.Range; s != nil {
		n++
		src, desc = data.Range(*s), fmt.Sprintf("range(n=%d%s)", s.N, blocksArg(s.OverrideNumBlocks))
	}
	if s := f.Source.FromItems; s != nil {
		n++
		src, desc = data.FromItems(*s), fmt.Sprintf("from_items(%d items%s)", len(s.Items), blocksArg(s.OverrideNumBlocks))
	}
	if s := f.Source.ReadParquet; s != nil {
		n++
		src, desc = data.ReadParquet(*s), "read_parquet("+strings.Join(s.Paths, ", ")+")"
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(sp, "one of range, fromItems, readParquet"))
	case n > 1:
		errs = append(errs, field.Forbidden(sp, "holds more than one of range, fromItems, readParquet"))
	}
	it := data.IterJaxBatches{
		BatchSize: f.Iter.BatchSize, PrefetchBatches: f.Iter.PrefetchBatches, SynchronizeBatches: f.Iter.SynchronizeBatches,
		DType: f.Iter.DType, DTypes: f.Iter.DTypes,
		LocalShuffleBufferSize: f.Iter.LocalShuffleBufferSize, LocalShuffleSeed: f.Iter.LocalShuffleSeed,
		AllowRaise: f.Iter.AllowRaise, MaxDropFraction: f.Iter.MaxDropFraction,
	}
	rp := dataPath.Child("iter", "ragged")
	switch f.Iter.Ragged {
	case "drop":
		it.Ragged = data.Drop{}
	case "pad":
		it.Ragged = data.Pad{Value: f.Iter.PadValue, Columns: f.Iter.PadColumns}
	case "raise", "":
		it.Ragged = data.Raise{}
	default:
		errs = append(errs, field.NotSupported(rp, f.Iter.Ragged, raggedNames))
	}
	if _, pad := it.Ragged.(data.Pad); !pad && (f.Iter.PadValue != 0 || f.Iter.PadColumns != nil) {
		errs = append(errs, field.Forbidden(dataPath.Child("iter", "padValue"), "applies only with ragged: pad"))
	}
	if len(errs) > 0 {
		return data.Dataset{}, it, desc, errs
	}
	return data.From(src), it, desc, nil
}

// blocksArg is ", override_num_blocks=n", or "" for Ray's choice.
func blocksArg(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", override_num_blocks=%d", n)
}

// readDataFile reads a dataset file strictly (package fieldfile): YAML (or
// JSON) with the names of dataFile.
func readDataFile(path string) (dataFile, error) {
	var f dataFile
	if err := checkRegularFile(path); err != nil {
		return f, err
	}
	if err := fieldfile.Load(path, fieldfile.DataPipeline, dataPath, &f); err != nil {
		return f, err
	}
	if rp := f.Source.ReadParquet; rp != nil {
		rp.Paths = slices.Clone(rp.Paths)
		for i, p := range rp.Paths {
			if p != "" && !strings.Contains(p, "://") && !filepath.IsAbs(p) {
				rp.Paths[i] = filepath.Join(filepath.Dir(path), p)
			}
		}
	}
	return f, nil
}

// spelling spells data.Predict's paths as the dataset file f does:
// pipeline.batchSize is pipeline.iter.batchSize, pipeline.workers is
// pipeline.hosts.workers, pipeline.dataset is pipeline.source and a field
// of the dataset's source (pipeline.dataset.source.n) is under the
// source's key in the file (pipeline.source.range.n).
func (f dataFile) spelling() field.Spelling {
	var key string
	switch {
	case f.Source.Range != nil:
		key = "range"
	case f.Source.FromItems != nil:
		key = "fromItems"
	case f.Source.ReadParquet != nil:
		key = "readParquet"
	}
	return func(p string) string {
		src := dataPath.Child("dataset", "source").String()
		if rest, ok := strings.CutPrefix(p, src); ok && key != "" && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return dataPath.Child("source", key).String() + rest
		}
		return dataSpelling(p)
	}
}

// dataSpelling spells data.Predict's paths (pipeline.batchSize,
// pipeline.workers, pipeline.dataset) as the dataset file does
// (pipeline.iter.batchSize, pipeline.hosts.workers, pipeline.source).
func dataSpelling(p string) string {
	rest, ok := strings.CutPrefix(p, dataPath.String()+".")
	if !ok {
		return p
	}
	name := rest
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		name = rest[:i]
	}
	has := func(t reflect.Type) bool {
		for _, f := range field.FileFields(t) {
			if n, _ := field.FileName(f); n == name {
				return true
			}
		}
		return false
	}
	switch {
	case name == "dataset":
		return dataPath.String() + ".source" + rest[len(name):]
	case has(reflect.TypeFor[dataIter]()):
		return dataPath.String() + ".iter." + rest
	case has(reflect.TypeFor[dataHosts]()):
		return dataPath.String() + ".hosts." + rest
	}
	return p
}
