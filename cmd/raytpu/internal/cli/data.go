package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Ray Data pipelines: predict iter_jax_batches before launch",
	}
	cmd.AddCommand(newDataPlanCmd())
	return cmd
}

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

func newDataPlanCmd() *cobra.Command {
	var file string
	var out output
	cmd := &cobra.Command{
		Use:   "plan -f DATASET.yaml",
		Short: "Predict every host's iter_jax_batches epoch: batches, ragged last batch, rows dropped",
		Long: `Predict, before anything is launched, what one epoch of iter_jax_batches
does on every JaxTrainer worker: Ray Train's equal split of the rows over
the workers (and the rows it drops silently), the full batches each host
gets, its ragged last batch and what the policy (drop, pad, raise) does
with it, with batch synchronisation across hosts when asked for.

With a local shuffle (localShuffleBufferSize below 2×batchSize-2 rows),
Ray's shuffling batcher can hand out short batches before the end of the
epoch, depending on the sizes and order of the blocks. Where those are
known (a range or fromItems source with overrideNumBlocks, read whole by
every worker, hosts.notSplit, or split over one worker) the prediction is
exact; otherwise a "may" row gives bounds, and the condition they depend
on.

The row count must be known: range, fromItems, or readParquet over local
files (read from the Parquet footers). A raise certain to fail at the end
of the first epoch, or a batch size that does not divide by a host's JAX
devices, exits 1 after printing what is known; warnings do not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if file == "" {
				return usagef("data plan needs -f DATASET.yaml")
			}
			return runDataPlan(cmd.OutOrStdout(), file, out.value)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "a dataset file (YAML): source, iter, hosts")
	addOutput(cmd, &out, "table", "json")
	return cmd
}

func runDataPlan(w io.Writer, path, format string) error {
	f, err := readDataFile(path)
	if err != nil {
		return err
	}
	fail := func(err error) error { return fileError(path, fieldfile.DataPipeline, err, f.spelling()) }
	ds, it, desc, errs := f.compile()
	if len(errs) > 0 {
		return fail(errs)
	}
	// The prediction needs the row count: a readParquet source is counted
	// here first, so a path missing here, a file that is not Parquet or an
	// empty directory is an error naming the path, never "unknown".
	if rp := f.Source.ReadParquet; rp != nil {
		if _, err := data.ParquetRows(rp.Paths...); err != nil {
			return fail(field.ErrorList{field.Invalid(dataPath.Child("source", "readParquet", "paths"), strings.Join(rp.Paths, ", "),
				"data plan needs the row count from the Parquet footers on this machine: "+err.Error())})
		}
	}
	pr, perrs := data.Predict(dataPath, ds, it, f.Hosts.hosts())
	if pr == nil {
		return fail(perrs)
	}
	for i := range pr.Findings {
		pr.Findings[i].Field = f.spelling()(pr.Findings[i].Field)
	}
	if format == "json" {
		if err := writeJSON(w, pr); err != nil {
			return err
		}
	} else {
		printPrediction(w, f, desc, pr)
	}
	if len(perrs) > 0 {
		return fail(perrs)
	}
	if pr.Rows < 0 {
		return fail(field.ErrorList{field.Invalid(dataPath.Child("source"), desc, "data plan needs the row count, which is unknown before running")})
	}
	return nil
}

func printPrediction(w io.Writer, f dataFile, desc string, pr *data.Prediction) {
	if f.Name != "" {
		fmt.Fprintf(w, "Dataset:   %s\n", terminalSafe(f.Name))
	}
	rows := "unknown before running"
	if pr.Rows >= 0 {
		rows = fmt.Sprintf("%d rows", pr.Rows)
	}
	fmt.Fprintf(w, "Source:    %s: %s\n", terminalSafe(desc), rows)
	acc := f.Hosts.Accelerator
	if acc == "" {
		acc = "CPU"
	}
	devices := "devices"
	if pr.Devices == 1 {
		devices = "device"
	}
	fmt.Fprintf(w, "Hosts:     %d workers (%s), %d JAX %s each\n", pr.Workers, terminalSafe(acc), pr.Devices, devices)
	sync := "off"
	if pr.Synchronized {
		sync = "on"
	} else if f.Iter.SynchronizeBatches {
		sync = "asked for, no effect"
	}
	shuffle := ""
	if n := f.Iter.LocalShuffleBufferSize; n > 0 {
		shuffle = fmt.Sprintf(", local shuffle buffer %d rows", n)
	}
	split := "split over the workers"
	if f.Hosts.NotSplit {
		split = "every worker reads all of it"
	}
	fmt.Fprintf(w, "Iterator:  %d rows per host per batch, %s, synchronize %s%s; %s\n\n", pr.BatchSize, pr.Policy, sync, shuffle, split)
	if len(pr.Groups) > 0 {
		tw := newTable(w)
		fmt.Fprintln(tw, "HOSTS\tROWS\tBATCHES\tSHAPES\tPAD ROWS\tDROPPED\tOUTCOME")
		for _, g := range pr.Groups {
			b := g.Batches
			hosts := fmt.Sprint(g.Hosts)
			if g.Ranks != nil {
				hosts = fmt.Sprint(g.Ranks)
			}
			outcome := string(b.Outcome)
			if b.Outcome != data.Completes {
				outcome += fmt.Sprintf(" at batch %d", b.AtBatch)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%s\n", hosts, b.Rows, b.Batches, shapes(b.Runs), b.PadRows, b.RowsDropped, outcome)
			if bd := g.Bounds; bd != nil {
				outs := make([]string, len(bd.Outcomes))
				for i, o := range bd.Outcomes {
					outs[i] = string(o)
				}
				fmt.Fprintf(tw, "  may\t\t%d-%d\tshort %d-%d\t%d-%d\t%d-%d\t%s\n", bd.Batches[0], bd.Batches[1],
					bd.ShortBatch[0], bd.ShortBatch[1], bd.PadRows[0], bd.PadRows[1], bd.RowsDropped[0], bd.RowsDropped[1], strings.Join(outs, " or "))
			}
		}
		tw.Flush()
		for _, g := range pr.Groups {
			if g.Bounds != nil {
				fmt.Fprintf(w, "\nmay: bounds, not a certainty; the batches depend on %s\n", g.Bounds.Condition)
			}
		}
		if f.Hosts.NotSplit {
			fmt.Fprintf(w, "\nTotal: %d rows dropped per host, %d padding rows over all hosts", pr.RowsDropped, pr.PadRows)
		} else {
			fmt.Fprintf(w, "\nTotal: %d rows dropped (%d by the split), %d padding rows", pr.RowsDropped, pr.SplitDropped, pr.PadRows)
		}
		switch {
		case pr.Fails:
			fmt.Fprint(w, "; the first epoch fails")
		case pr.MayFail:
			fmt.Fprint(w, "; the first epoch may fail")
		}
		fmt.Fprintln(w)
	}
	if len(pr.Findings) > 0 {
		fmt.Fprintln(w, "\nFindings:")
		for _, x := range pr.Findings {
			fmt.Fprintf(w, "  %-7s %s: %s\n", x.Severity, x.Field, x.Message)
		}
	}
}

// shapes writes a host's batches as runs: "7×64, 1×52+12pad".
func shapes(runs []data.Run) string {
	if len(runs) == 0 {
		return "-"
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%d×%d", r.Batches, r.Rows)
		if r.Pad > 0 {
			parts[i] += fmt.Sprintf("+%dpad", r.Pad)
		}
	}
	return strings.Join(parts, ", ")
}
