package cli

import (
	"fmt"
	"io"
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
