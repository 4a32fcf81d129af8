package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

// planFlags are the flags of `raytpu plan`.
type planFlags struct {
	spec       placement.SliceSpec
	resources  string
	strategy   string
	cluster    string
	clusterYML string
	compare    bool
	file       string
	out        output
	autoscaler string
	capacity   capacityFlags
	quota      string
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan (--accelerator GEN --topology T | -f APP.yaml)",
		Short: "Compile a slice placement as Ray builds it and schedule it on the simulated cluster",
		Long: `Compile a slice placement group exactly as Ray's slice_placement_group builds
it, place it on the simulated TPU cluster, and print where every bundle lands
with a diagnosis. --compare also places the same chips requested per chip
without a topology, the request that can land on several slices and hang at
the first collective.

The default cluster holds one more slice of the requested shape than the
plan needs, plus one CPU-only node. --cluster takes the simulated cluster's
spec, e.g. "2*v6e-16,v4-16,cpu:2".

With -f APP.yaml it compiles a Serve application file and places every
replica's slice (one per replica of a deployment with a topology) on the
simulated cluster; the default cluster then holds the slices the replicas
need plus one spare of each shape.

A TPU item of the cluster spec with max=N (maxSlices in the file) is a
worker group Ray's autoscaler scales on KubeRay, as 'raytpu render
--autoscale' renders it: "v4-16:2x2x2{max=2}" has no slice now and may grow
to two. The plan then shows which groups the autoscaler grows and to what,
or why it cannot (max too small, no group of the topology, single- against
multi-host, autoscaler v2 and multi-host slices), and places the plan on
the cluster as scaled.

--capacity (spot, reservation with --reservation, flex-start) records in
the compiled plan where its TPUs come from on GKE, for 'raytpu render -f'
to render. --quota google.com/tpu=CHIPS answers before submission whether
the plan fits a Kueue queue's quota of TPU chips, all its slices at once as
Kueue admits a workload ("fits quota: needs 8 google.com/tpu of 8"); with
CLASS:google.com/tpu=CHIPS the quota is for that capacity class only. The
CPU head takes none of it.

Exit status: 1 when the requested placement's diagnosis or the autoscaler
prediction has an error finding (for example HeadReservationFailed,
SpansSlices, Infeasible, MaxSlicesTooSmall), or the plan does not fit
--quota, after
the full plan and diagnosis are printed on stdout in the chosen format; the
error line on stderr names the failing finding codes. Warnings (Pending,
BusySlice) do not fail a plan. The --compare part illustrates the same
chips requested without a topology and never changes the exit status:
scripts and CI gate on the plan itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.spec.Accelerator, "accelerator", "", "TPU generation: v4, v5e, v5p, v6e, v7x (or TPU-V6E, tpu7x, ...)")
	fl.StringVar(&f.spec.Topology, "topology", "", "slice topology, e.g. 4x4 or 2x2x2")
	fl.IntVar(&f.spec.NumSlices, "num-slices", 1, "number of slices")
	fl.IntVar(&f.spec.ChipsPerHost, "chips-per-host", 0, "chips per host (Ray's chips_per_vm)")
	fl.BoolVar(&f.spec.PGPerSlice, "pg-per-slice", false, "one placement group per slice")
	fl.StringVar(&f.spec.Name, "name", "", "placement group name")
	fl.StringVar(&f.resources, "resources-per-bundle", "", `resources of each bundle as JSON, e.g. '{"TPU": 1}'`)
	fl.StringVar(&f.strategy, "strategy", "SPREAD", "placement strategy: "+strings.Join(placement.Strategies(), ", "))
	fl.StringVar(&f.cluster, "cluster", "", "simulated cluster spec (default: the plan's slices plus one spare, and cpu:1)")
	fl.StringVar(&f.clusterYML, "cluster-file", "", "simulated cluster spec file in YAML")
	fl.BoolVar(&f.compare, "compare", false, "also place the same chips requested per chip without a topology")
	fl.StringVarP(&f.file, "file", "f", "", "a Serve application file (YAML): place every replica's slice instead of one slice spec")
	fl.StringVar(&f.autoscaler, "autoscaler-version", string(sim.AutoscalerV1), "the Ray autoscaler the prediction follows for autoscaled groups of the cluster spec (max=N): v1 (Ray 2.60's default on KubeRay) or v2")
	addCapacityFlags(fl, &f.capacity)
	fl.StringVar(&f.quota, "quota", "", "a Kueue queue's quota the plan must fit, all its slices at once: google.com/tpu=CHIPS, or CLASS:google.com/tpu=CHIPS for one capacity class")
	addOutput(cmd, &f.out, "table", "json", "svg")
	return cmd
}

// planReport is the JSON form of `raytpu plan -o json`.
type planReport struct {
	Cluster    string                     `json:"cluster"`
	Plan       *placement.Plan            `json:"plan"`
	Placement  *sim.SlicePlacement        `json:"placement"`
	Comparison *sim.SlicePlacement        `json:"comparison,omitempty"`
	Request    *sim.PlacementGroupRequest `json:"comparisonRequest,omitempty"`
	// Autoscaling is the autoscaler's prediction when the cluster spec
	// has autoscaled groups; Cluster is then the spec as it scales them.
	Autoscaling *sim.AutoscalePrediction `json:"autoscaling,omitempty"`
	// Quota says whether the plan fits --quota.
	Quota *sim.QuotaFit `json:"quota,omitempty"`
}

func runPlan(cmd *cobra.Command, f *planFlags) error {
	if err := f.out.check(); err != nil {
		return err
	}
	if f.cluster != "" && f.clusterYML != "" {
		return usagef("--cluster and --cluster-file both give the simulated cluster: keep one")
	}
	if err := checkAutoscalerFlag(f.autoscaler); err != nil {
		return err
	}
	if f.file != "" {
		if f.spec.Accelerator != "" || f.spec.Topology != "" || f.compare {
			return usagef("-f takes the slices from the application file: drop --accelerator, --topology and --compare")
		}
		// A flag of the slice spec would be ignored: refused instead.
		for _, name := range []string{"num-slices", "chips-per-host", "pg-per-slice", "name", "resources-per-bundle", "strategy"} {
			if cmd.Flags().Changed(name) {
				return usagef("--%s is a flag of one slice spec (--accelerator, --topology); -f takes the slices from the application file: drop it", name)
			}
		}
		return runPlanApp(cmd, f)
	}
	if f.resources != "" {
		if err := json.Unmarshal([]byte(f.resources), &f.spec.ResourcesPerBundle); err != nil {
			return usagef(`--resources-per-bundle %s: want a JSON object of numbers, e.g. {"TPU": 1, "CPU": 2}`, strconv.Quote(capText(f.resources, maxArg)))
		}
	}
	f.spec.Strategy = placement.Strategy(strings.ToUpper(f.strategy))
	if f.spec.NumSlices < 1 {
		// The flag's one rule (the Go API's 0 for one slice is not the
		// flag's: its default is 1).
		return usagef("--num-slices %d: want 1 or more slices", f.spec.NumSlices)
	}
	group, err := f.spec.Compile(nil)
	if err != nil {
		return flagErrors(err, sliceSpecFlags)
	}
	spec, err := clusterSpec(f, group)
	if err != nil {
		return err
	}
	if f.out.value == "svg" {
		// Every item is at least one host: refused before the cluster
		// is built, which costs as much as its hosts.
		n := 0
		for _, it := range spec.Items {
			n += max(it.Count, 1)
			if n > maxSVGHosts {
				return svgTooLarge(n)
			}
		}
	}
	plan := placement.NewSlicePlan(f.spec.Name, group)
	if plan.Capacity, err = f.capacity.forPlan(plan.Slices); err != nil {
		return err
	}
	fit, err := quotaFit(f.quota, plan)
	if err != nil {
		return err
	}
	pred, err := predictAutoscaling(spec, plan, f.autoscaler)
	if err != nil {
		return err
	}
	if pred != nil {
		spec = pred.Spec(spec)
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		return err
	}
	if f.out.value == "svg" && cluster.NumHosts() > maxSVGHosts {
		return svgTooLarge(cluster.NumHosts())
	}
	sp, err := cluster.PlaceSlices(group)
	if err != nil && (sp == nil || !errors.Is(err, sim.ErrSliceReservation)) {
		return err
	}
	// A slice that cannot be reserved is part of the answer: it is in
	// sp.Error and the diagnosis, printed below.
	report := planReport{Cluster: spec.String(), Plan: plan, Placement: sp, Autoscaling: pred, Quota: fit}
	if f.compare {
		// The hazard: the same chips as per-chip bundles, no topology, on a
		// fresh copy of the cluster.
		fresh, err := sim.NewCluster(spec)
		if err != nil {
			return err
		}
		req := perChipRequest(group)
		cmp, err := fresh.PlaceBundles(req)
		if err != nil {
			return err
		}
		report.Comparison, report.Request = cmp, &req
	}
	w := cmd.OutOrStdout()
	switch f.out.value {
	case "json":
		err = writeJSON(w, report)
	case "svg":
		err = writeSVG(w, cluster, sp)
	default:
		err = printPlan(w, group, report)
	}
	if err != nil {
		return err
	}
	if err := planError(sp.Diagnosis, pred); err != nil {
		return err
	}
	return quotaError(fit)
}

// planError names the autoscaler prediction's error codes, the cause of
// any placement error that follows, or else is diagnosisError.
func planError(d placement.Diagnosis, pred *sim.AutoscalePrediction) error {
	var codes []string
	if pred != nil {
		for _, f := range pred.Findings {
			if f.Severity == placement.SeverityError && !slices.Contains(codes, f.Code) {
				codes = append(codes, f.Code)
			}
		}
	}
	if len(codes) == 0 {
		return diagnosisError(d)
	}
	return fmt.Errorf("plan: the autoscaler cannot give the plan its slices: %s (the prediction and the plan on the cluster it leaves are on stdout)", strings.Join(codes, ", "))
}

// diagnosisError fails a plan whose diagnosis has an error finding, naming
// the codes of those findings once each, in order. Only the requested
// placement's diagnosis counts, never the --compare illustration.
func diagnosisError(d placement.Diagnosis) error {
	var codes []string
	for _, f := range d {
		if f.Severity == placement.SeverityError && !slices.Contains(codes, f.Code) {
			codes = append(codes, f.Code)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	return fmt.Errorf("plan: the diagnosis has errors: %s (the plan and its full diagnosis are on stdout)", strings.Join(codes, ", "))
}

// perChipRequest asks for the group's chips as {TPU: 1} bundles with no
// topology, head reservation or slice pin, strategy SPREAD.
func perChipRequest(g *placement.SliceGroup) sim.PlacementGroupRequest {
	n := int(g.BundleResources[rayvocab.ResourceTPU]) * g.BundlesPerSlice * g.NumSlices
	req := sim.PlacementGroupRequest{Name: "per-chip", Strategy: placement.Spread}
	for range n {
		req.Bundles = append(req.Bundles, map[string]float64{rayvocab.ResourceTPU: 1})
	}
	return req
}

func clusterSpec(f *planFlags, g *placement.SliceGroup) (sim.Spec, error) {
	switch {
	case f.clusterYML != "":
		b, err := readFile(f.clusterYML)
		if err != nil {
			return sim.Spec{}, fmt.Errorf("--cluster-file: %w", err)
		}
		s, err := sim.ParseSpecYAML(b)
		if err != nil {
			return s, fileError(f.clusterYML, fieldfile.ClusterSpec, err, nil)
		}
		return s, nil
	case f.cluster != "":
		s, err := sim.ParseSpec(f.cluster)
		return s, flagErrors(err, map[string]string{"spec": "--cluster"})
	}
	item := g.PodType
	if f.spec.ChipsPerHost != 0 {
		item += "@" + strconv.Itoa(f.spec.ChipsPerHost)
	}
	return sim.ParseSpec(fmt.Sprintf("%d*%s:%s,cpu:1", g.NumSlices+1, item, g.Topology))
}

// sliceSpecFlags names the flag that gives each field of the SliceSpec
// `raytpu plan` compiles.
var sliceSpecFlags = map[string]string{
	"accelerator":        "--accelerator",
	"topology":           "--topology",
	"numSlices":          "--num-slices",
	"chipsPerHost":       "--chips-per-host",
	"pgPerSlice":         "--pg-per-slice",
	"name":               "--name",
	"resourcesPerBundle": "--resources-per-bundle",
	"strategy":           "--strategy",
}

// checkAutoscalerFlag refuses an --autoscaler-version that is not one.
func checkAutoscalerFlag(v string) error {
	if slices.Contains(sim.AutoscalerVersions(), v) {
		return nil
	}
	msg := fmt.Sprintf("--autoscaler-version %s is not supported (valid: %s)", strconv.Quote(capText(v, maxArg)), strings.Join(sim.AutoscalerVersions(), ", "))
	if s := field.Nearest(v, sim.AutoscalerVersions()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return usageError{errors.New(msg)}
}
