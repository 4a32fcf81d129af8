package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

func newCatalogCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "catalog [GEN]",
		Short: "List TPU generations, or one generation in detail",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one generation, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			gens := tpu.Generations()
			if len(args) == 1 {
				g, err := tpu.ResolveGeneration(args[0], field.NewPath("generation"))
				if err != nil {
					return field.ErrorList{err}
				}
				gens = []*tpu.Generation{g}
			}
			w := cmd.OutOrStdout()
			if out.value == "json" {
				type genJSON struct {
					*tpu.Generation
					RayAcceleratorType string   `json:"rayAcceleratorType"`
					RayTopologies      []string `json:"rayTopologies"`
					GKETopologies      []string `json:"gkeTopologies"`
				}
				var list []genJSON
				for _, g := range gens {
					list = append(list, genJSON{g, g.RayAcceleratorType(), g.RayTopologies(), g.GKETopologies()})
				}
				if len(args) == 1 {
					return writeJSON(w, list[0])
				}
				return writeJSON(w, list)
			}
			if len(args) == 1 {
				return printGeneration(cmd, gens[0])
			}
			tw := newTable(w)
			fmt.Fprintln(tw, "GEN\tALIASES\tTORUS\tCORES/CHIP\tDEVICES/CHIP\tCHIPS/HOST\tRAY TYPE\tGKE ACCELERATOR\tHBM/CHIP\tBF16/CHIP\tMAX CHIPS")
			for _, g := range gens {
				fmt.Fprintf(tw, "%s\t%s\t%dD\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\n",
					g.Name, dash(strings.Join(g.Aliases, ",")), g.Dims, g.CoresPerChip, g.DevicesPerChip,
					ints(g.ChipsPerHostOptions), g.RayAcceleratorType(), dash(g.GKEAccelerator),
					fmt.Sprintf("%g GiB", g.HBMGiB), fmt.Sprintf("%g TFLOPS", g.PeakBF16TFLOPS), g.MaxChips)
			}
			return tw.Flush()
		},
	}
	addOutput(cmd, &out, "table", "json")
	return cmd
}

func printGeneration(cmd *cobra.Command, g *tpu.Generation) error {
	tw := newTable(cmd.OutOrStdout())
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("Generation:", g.Name)
	row("Aliases:", dash(strings.Join(g.Aliases, ", ")))
	row("Ray accelerator type:", g.RayAcceleratorType()+" (version "+g.RayVersion+")")
	row("GCE accelerator prefix:", g.GCEPrefix)
	row("GKE accelerator:", dash(g.GKEAccelerator))
	row("Torus:", fmt.Sprintf("%dD", g.Dims))
	row("TensorCores per chip:", strconv.Itoa(g.CoresPerChip))
	row("JAX devices per chip:", strconv.Itoa(g.DevicesPerChip))
	row("Chips per host:", ints(g.ChipsPerHostOptions))
	var mts []string
	for _, m := range g.MachineTypes {
		mts = append(mts, fmt.Sprintf("%s (%d)", m.Name, m.Chips))
	}
	row("Machine types:", dash(strings.Join(mts, ", ")))
	row("HBM per chip:", fmt.Sprintf("%g GiB (approx.)", g.HBMGiB))
	row("Peak bf16 per chip:", fmt.Sprintf("%g TFLOPS (approx.)", g.PeakBF16TFLOPS))
	if g.HBMBandwidthGBps > 0 {
		row("HBM bandwidth per chip:", fmt.Sprintf("%g GB/s (approx.)", g.HBMBandwidthGBps))
	}
	row("Largest slice:", fmt.Sprintf("%d chips", g.MaxChips))
	row("Multislice:", strconv.FormatBool(g.Multislice))
	row("Ray topologies:", summarize(g.RayTopologies()))
	row("GKE topologies:", summarize(g.GKETopologies()))
	return tw.Flush()
}

func summarize(list []string) string {
	if len(list) > 24 {
		return strings.Join(list[:24], " ") + fmt.Sprintf(" … (%d in all)", len(list))
	}
	return strings.Join(list, " ")
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
