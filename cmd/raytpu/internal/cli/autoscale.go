package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/kuberay/kubesim"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// autoscaleFlags are render's and apply's flags for Ray's autoscaler.
type autoscaleFlags struct {
	on          bool
	min, max    int
	headCPU     int
	workerCPU   int
	groups      []string
	idleTimeout time.Duration
	mode        string
	version     string
}

func addAutoscaleFlags(cmd *cobra.Command, a *autoscaleFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&a.on, "autoscale", false, "render Ray's autoscaler (enableInTreeAutoscaling): it adds whole slices to a TPU worker group when work waits for them and removes idle ones, between --min-slices and --max-slices")
	fl.IntVar(&a.min, "min-slices", 0, "with --autoscale: the slices every TPU worker group keeps, and starts with")
	fl.IntVar(&a.max, "max-slices", 0, "with --autoscale: the most slices of every TPU worker group (default: the slices the plan needs; fewer is refused)")
	fl.StringArrayVar(&a.groups, "group-slices", nil, "with --autoscale: GROUP=MIN:MAX bounds one worker group by its name in the rendered object (v4-16, v4-16-0, ...); repeatable")
	fl.DurationVar(&a.idleTimeout, "idle-timeout", 0, "with --autoscale: how long a worker may idle before the autoscaler removes it, whole seconds (default: the autoscaler's 60s)")
	fl.StringVar(&a.mode, "upscaling-mode", "", "with --autoscale: "+kuberay.UpscalingDefault+", "+kuberay.UpscalingConservative+" or "+kuberay.UpscalingAggressive+" (default: the autoscaler's, Default)")
	fl.IntVar(&a.headCPU, "head-cpus", 0, "with --autoscale: the head pod's CPU request, which Ray's autoscaler reads and KubeRay passes to ray start --num-cpus (default 8)")
	fl.IntVar(&a.workerCPU, "worker-cpus", 0, "with --autoscale: each TPU host pod's CPU request, as --head-cpus (default 8)")
	fl.StringVar(&a.version, "autoscaler-version", "", "with --autoscale: v1 or v2 (default v1, set on the head as RAY_enable_autoscaler_v2=0: Ray 2.60 would run v2 under KubeRay, and v2 does not start multi-host slices)")
}

// autoscaling is the kuberay option the flags give, nil without
// --autoscale; a bound without --autoscale is a usage error.
func (a *autoscaleFlags) autoscaling(cmd *cobra.Command) (*kuberay.Autoscaling, error) {
	if !a.on {
		for _, name := range []string{"min-slices", "max-slices", "group-slices", "idle-timeout", "upscaling-mode", "autoscaler-version", "head-cpus", "worker-cpus"} {
			if cmd.Flags().Changed(name) {
				return nil, usagef("--%s needs --autoscale", name)
			}
		}
		return nil, nil
	}
	out := &kuberay.Autoscaling{MinSlices: a.min, MaxSlices: a.max, IdleTimeout: a.idleTimeout, UpscalingMode: a.mode, Version: a.version,
		HeadCPU: a.headCPU, WorkerCPU: a.workerCPU}
	for _, g := range a.groups {
		name, bounds, ok := strings.Cut(g, "=")
		lo, hi, ok2 := strings.Cut(bounds, ":")
		minS, err1 := strconv.Atoi(lo)
		maxS, err2 := strconv.Atoi(hi)
		if !ok || !ok2 || name == "" || err1 != nil || err2 != nil {
			return nil, usagef("--group-slices %q: want GROUP=MIN:MAX, e.g. v4-16=0:2", g)
		}
		if out.Groups == nil {
			out.Groups = map[string]kuberay.SliceRange{}
		}
		if _, dup := out.Groups[name]; dup {
			return nil, usagef("--group-slices: group %q given twice", name)
		}
		out.Groups[name] = kuberay.SliceRange{Min: minS, Max: maxS}
	}
	return out, nil
}

// predictAutoscaling is the autoscaler's prediction for p on spec, nil
// when spec has no autoscaled item.
func predictAutoscaling(spec sim.Spec, p *placement.Plan, version string) (*sim.AutoscalePrediction, error) {
	for _, it := range spec.Items {
		if it.Autoscaled() {
			return sim.PredictAutoscaling(spec, p, sim.AutoscalerVersion(version))
		}
	}
	return nil, nil
}

// printAutoscale prints the autoscaler's prediction: each autoscaled
// group's scale, then every finding, in the simulator's words.
func printAutoscale(w io.Writer, pred *sim.AutoscalePrediction) {
	if pred == nil {
		return
	}
	fmt.Fprintf(w, "Autoscaler (Ray 2.60 %s on KubeRay, predicted):\n", pred.Version)
	for _, g := range pred.Groups {
		fmt.Fprintf(w, "  %s\n", terminalSafe(fmt.Sprint(g)))
	}
	for _, f := range pred.Findings {
		if f.Code == sim.CodeScaleUp {
			continue // the group lines above say it
		}
		if f.Part != "" {
			fmt.Fprintf(w, "  %-7s %s: %s: %s\n", f.Severity, f.Code, terminalSafe(f.Part), terminalSafe(f.Message))
			continue
		}
		fmt.Fprintf(w, "  %-7s %s: %s\n", f.Severity, f.Code, terminalSafe(f.Message))
	}
	fmt.Fprintln(w)
}

// checkExistingCluster predicts, before a RayJob is created on the
// existing RayCluster cs (--ray-cluster), whether the cluster can give
// plan p its slices: with the slices it has, or as its autoscaler grows
// its groups. It prints the prediction in `raytpu plan`'s words, and a
// plan the cluster cannot serve (no group of the slice's shape, a max too
// small, autoscaler v2 and a multi-host slice) is an error naming the
// flag, the cluster and each finding; its job would otherwise wait with
// its slice reservation pending.
func checkExistingCluster(w io.Writer, cs *kuberay.ClusterSlices, p *placement.Plan) error {
	if len(p.Slices) == 0 {
		return nil
	}
	pred, err := kubesim.Predict(cs, p)
	if err != nil {
		return fmt.Errorf("--ray-cluster %s: its TPU worker groups as a cluster spec: %w", cs.Name, err)
	}
	if cs.Autoscaled {
		fmt.Fprintf(w, "RayCluster %s/%s, TPU worker groups in spec order (items[i]):\n", cs.Namespace, cs.Name)
		for i, g := range cs.Groups {
			fmt.Fprintf(w, "  items[%d] group %s: %s %s, %d slices (min %d, max %d)\n", i, g.Name, g.PodType, g.Topology, g.Replicas, g.MinReplicas, g.MaxReplicas)
		}
		printAutoscale(w, pred)
	}
	if err := pred.Err(); err != nil {
		return fmt.Errorf("--ray-cluster %s: RayCluster %s/%s cannot run plan %q: %w", cs.Name, cs.Namespace, cs.Name, p.Name, err)
	}
	return nil
}
