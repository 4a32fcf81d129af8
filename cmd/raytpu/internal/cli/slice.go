package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/tpu"
)

// SliceJSON is the stable JSON form of `raytpu slice -o json`.
type SliceJSON struct {
	Generation         string            `json:"generation"`
	Topology           string            `json:"topology"`
	Chips              int               `json:"chips"`
	ChipsPerHost       int               `json:"chipsPerHost"`
	Hosts              int               `json:"hosts"`
	MultiHost          bool              `json:"multiHost"`
	PodType            string            `json:"podType"`
	AcceleratorType    string            `json:"acceleratorType"`
	GCEAcceleratorType string            `json:"gceAcceleratorType"`
	GKEAccelerator     string            `json:"gkeAccelerator"`
	GKETopology        string            `json:"gkeTopology"`
	GKENodeSelector    map[string]string `json:"gkeNodeSelector,omitempty"`
	GoogleTPUPerHost   int               `json:"googleTpuPerHost"`
	MachineType        string            `json:"machineType"`
	HeadResource       string            `json:"headResource"`
	DevicesPerHost     int               `json:"devicesPerHost"`
	Devices            int               `json:"devices"`
	HBMGiB             float64           `json:"hbmGiB"`
	PeakBF16TFLOPS     float64           `json:"peakBf16Tflops"`
	RayValid           bool              `json:"rayValid"`
	RayReason          string            `json:"rayReason,omitempty"`
	GKEValid           bool              `json:"gkeValid"`
	GKEReason          string            `json:"gkeReason,omitempty"`
}

func sliceJSON(s *tpu.Slice) SliceJSON {
	return SliceJSON{
		Generation: s.Generation.Name, Topology: s.Topology.String(), Chips: s.Chips(), ChipsPerHost: s.ChipsPerHost,
		Hosts: s.Hosts(), MultiHost: s.MultiHost(), PodType: s.PodType(), AcceleratorType: s.RayAcceleratorType(),
		GCEAcceleratorType: s.GCEAcceleratorType(), GKEAccelerator: s.GKEAccelerator(), GKETopology: s.Topology.String(),
		GKENodeSelector: s.GKENodeSelector(), GoogleTPUPerHost: s.ChipsPerHost, MachineType: s.MachineType,
		HeadResource: s.HeadResource(), DevicesPerHost: s.DevicesPerHost(), Devices: s.Devices(),
		HBMGiB: s.HBMGiB(), PeakBF16TFLOPS: s.PeakBF16TFLOPS(),
		RayValid: s.RayValid, RayReason: s.RayReason, GKEValid: s.GKEValid, GKEReason: s.GKEReason,
	}
}

func newSliceCmd() *cobra.Command {
	var (
		out          output
		chipsPerHost int
		machineType  string
	)
	cmd := &cobra.Command{
		Use:   "slice GEN TOPOLOGY",
		Short: "Resolve a TPU slice shape: chips, hosts, pod type, GKE labels",
		Args:  exactArgs("GEN", "TOPOLOGY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			s, errs := tpu.SliceSpec{Generation: args[0], Topology: args[1], ChipsPerHost: chipsPerHost, MachineType: machineType}.
				Resolve(tpu.TargetAny, tpu.FieldsUnder(nil))
			if errs != nil {
				// GEN and TOPOLOGY are a spec (exit 1, named by their
				// fields); the flags are named as typed (exit 2).
				return flagErrors(errs, map[string]string{"chipsPerHost": "--chips-per-host", "machineType": "--machine-type"})
			}
			j := sliceJSON(s)
			if out.value == "json" {
				return writeJSON(cmd.OutOrStdout(), j)
			}
			tw := newTable(cmd.OutOrStdout())
			row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
			row("Generation:", j.Generation)
			row("Topology:", j.Topology)
			row("Chips:", strconv.Itoa(j.Chips))
			row("Hosts:", fmt.Sprintf("%d × %d chips (%s)", j.Hosts, j.ChipsPerHost, map[bool]string{true: "multi-host", false: "single host"}[j.MultiHost]))
			row("Machine type:", dash(j.MachineType))
			row("Ray pod type:", j.PodType+" (head resource "+j.HeadResource+")")
			row("Ray accelerator type:", j.AcceleratorType)
			row("GCE accelerator type:", j.GCEAcceleratorType)
			row("GKE accelerator:", dash(j.GKEAccelerator))
			row("google.com/tpu per host:", strconv.Itoa(j.GoogleTPUPerHost))
			row("JAX devices:", fmt.Sprintf("%d (%d per host)", j.Devices, j.DevicesPerHost))
			row("HBM:", fmt.Sprintf("%g GiB", j.HBMGiB))
			row("Peak bf16:", fmt.Sprintf("%g TFLOPS", j.PeakBF16TFLOPS))
			row("Valid for Ray:", verdict(j.RayValid, j.RayReason))
			row("Valid for GKE:", verdict(j.GKEValid, j.GKEReason))
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&chipsPerHost, "chips-per-host", 0, "chips per host (default: the machine type's, else Ray's rule)")
	cmd.Flags().StringVar(&machineType, "machine-type", "", "GCE machine type, e.g. ct6e-standard-4t")
	addOutput(cmd, &out, "table", "json")
	return cmd
}

func verdict(ok bool, reason string) string {
	if ok {
		return "yes"
	}
	return "no: " + reason
}
