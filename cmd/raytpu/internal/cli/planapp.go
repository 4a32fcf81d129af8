package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// appPlanReport is the JSON form of `raytpu plan -f APP.yaml -o json`.
type appPlanReport struct {
	Cluster string                 `json:"cluster"`
	Plan    *placement.Plan        `json:"plan"`
	Status  *backend.ServiceStatus `json:"status"`
	// Autoscaling: see planReport.
	Autoscaling *sim.AutoscalePrediction `json:"autoscaling,omitempty"`
	// Quota: see planReport.
	Quota *sim.QuotaFit `json:"quota,omitempty"`
}

// runPlanApp compiles a Serve application file and deploys it on the
// simulated cluster: where every replica's slice lands, and the diagnosis.
func runPlanApp(cmd *cobra.Command, f *planFlags) error {
	if f.out.value == "svg" {
		return usagef("-o svg draws one slice placement; with -f use table or json")
	}
	plan, err := loadApplication(f.file)
	if err != nil {
		return err
	}
	if plan.Capacity, err = f.capacity.forPlan(plan.Slices); err != nil {
		return err
	}
	fit, err := quotaFit(f.quota, plan)
	if err != nil {
		return err
	}
	spec, err := appClusterSpec(f, plan)
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
	st, derr := cluster.Deploy(cmd.Context(), plan)
	if st == nil {
		return derr
	}
	w := cmd.OutOrStdout()
	if f.out.value == "json" {
		if err := writeJSON(w, appPlanReport{Cluster: spec.String(), Plan: plan, Status: st, Autoscaling: pred, Quota: fit}); err != nil {
			return err
		}
	} else {
		printAppPlan(w, spec, plan, st, pred)
		printCapacity(w, plan, fit)
	}
	if err := planError(st.Diagnosis, pred); err != nil {
		return err
	}
	return quotaError(fit)
}

// appClusterSpec is --cluster (or --cluster-file), or by default the
// slices the application's replicas need plus one spare of each shape,
// and one CPU-only node.
func appClusterSpec(f *planFlags, p *placement.Plan) (sim.Spec, error) {
	if f.cluster != "" || f.clusterYML != "" {
		return clusterSpec(f, nil)
	}
	need := map[string]int{}
	for _, g := range p.Slices {
		need[g.PodType+":"+g.Topology] += g.NumSlices
	}
	var items []string
	for _, k := range slices.Sorted(maps.Keys(need)) {
		items = append(items, fmt.Sprintf("%d*%s", need[k]+1, k))
	}
	return sim.ParseSpec(strings.Join(append(items, "cpu:1"), ","))
}

func printAppPlan(w io.Writer, spec sim.Spec, p *placement.Plan, st *backend.ServiceStatus, pred *sim.AutoscalePrediction) {
	fmt.Fprintf(w, "Application: %s (%d replica slices)\n", terminalSafe(p.Name), len(p.Slices))
	if pred != nil {
		fmt.Fprintf(w, "Cluster:     %s (simulated, as the autoscaler scales it)\n\n", spec)
		printAutoscale(w, pred)
	} else {
		fmt.Fprintf(w, "Cluster:     %s (simulated)\n\n", spec)
	}
	if len(st.Landings) == 0 {
		fmt.Fprintln(w, "No deployment has a topology: Serve places each replica with its own placement group.")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "PART\tBUNDLE\tSTATE\tNODE\tSLICE")
		for _, l := range st.Landings {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", terminalSafe(fmt.Sprint(l.Part)), l.Bundle, l.State, terminalSafe(dash(l.Node)), terminalSafe(dash(l.SliceName)))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	printDiagnosis(w, "Diagnosis", st.Diagnosis)
}
