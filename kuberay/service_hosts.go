package kuberay

import (
	"fmt"
	"strconv"
	"strings"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/tpu"
)

// hostGroups renders a worker group for every deployment of a Serve plan
// whose replicas ask for TPU without a topology (ray_actor_options
// resources {TPU: n} and an accelerator_type, or TPU in its
// placement_group_bundles): such replicas own no slice, so the plan has no
// slice group for them, but they still need TPU hosts. Each group is the
// smallest single-host slice of the deployment's generation that holds
// what one replica asks of a host, one host per TPU bundle of each replica
// the deployment starts with (startReplicas). As for replicas that own
// slices, each host is a worker group of its own (one slice, not a
// multislice job), so more replicas append worker groups, which KubeRay
// applies to the running RayCluster in place. first numbers the groups
// after the slice groups.
func hostGroups(p *placement.Plan, o settings, first int) ([]*rayv1ac.WorkerGroupSpecApplyConfiguration, field.ErrorList) {
	if p.Serve == nil {
		return nil, nil
	}
	deps := field.NewPath("plan", "serve", "config", "deployments")
	var groups []*rayv1ac.WorkerGroupSpecApplyConfiguration
	var errs field.ErrorList
	for _, d := range p.Serve.Config.Deployments {
		need, hosts := tpuNeed(d)
		if need <= 0 || d.Reservation != nil {
			continue
		}
		opts := deps.Key(d.Name).Child("ray_actor_options")
		sl, err := hostSlice(d, need, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := o.Capacity.CheckGeneration(opts.Child("accelerator_type"), d.RayActorOptions.AcceleratorType); err != nil {
			errs = append(errs, err)
			continue
		}
		for range startReplicas(d) * hosts {
			name := sl.PodType() + "-" + strconv.Itoa(first+len(groups))
			groups = append(groups, tpuWorkerGroup(name, sl, 1, 1, 1, nil, nil, o))
		}
	}
	return groups, errs
}

// tpuNeed is what one replica of d asks of a TPU host, and on how many
// hosts at most: its actor's TPU on one host, or the largest TPU bundle of
// its placement group with one host per TPU bundle.
func tpuNeed(d serveconfig.Deployment) (float64, int) {
	if len(d.PlacementGroupBundles) > 0 {
		need, hosts := 0.0, 0
		for _, b := range d.PlacementGroupBundles {
			if t := b[rayvocab.ResourceTPU]; t > 0 {
				need, hosts = max(need, t), hosts+1
			}
		}
		return need, hosts
	}
	if o := d.RayActorOptions; o != nil {
		return o.Resources[rayvocab.ResourceTPU], 1
	}
	return 0, 0
}

// hostSlice is the smallest single-host slice of d's generation whose
// host has need chips, at the generation's default chips per host; opts
// is the path of d's ray_actor_options.
func hostSlice(d serveconfig.Deployment, need float64, opts *field.Path) (*tpu.Slice, *field.Error) {
	path := opts.Child("accelerator_type")
	accel := ""
	if d.RayActorOptions != nil {
		accel = d.RayActorOptions.AcceleratorType
	}
	if accel == "" {
		return nil, field.Required(path, fmt.Sprintf("deployment %q asks for TPU %s without a topology: KubeRay needs its TPU generation (accelerator_type, e.g. v6e) to choose the hosts' node pool", d.Name, placement.FormatNumber(need)))
	}
	gen, e := tpu.ResolveGeneration(accel, path)
	if e != nil {
		return nil, e
	}
	var fits []string
	for chips := 1; chips <= 64; chips++ {
		t, ok := gen.TopologyForChips(chips)
		if !ok {
			continue
		}
		sl, errs := tpu.SliceSpec{Generation: gen.Name, Topology: t.String()}.Resolve(tpu.TargetGKE, tpu.SliceFields{})
		if len(errs) > 0 || sl.MultiHost() || sl.GKEAccelerator() == "" {
			continue
		}
		if float64(sl.ChipsPerHost) >= need {
			return sl, nil
		}
		fits = append(fits, fmt.Sprintf("%s (%d chips)", t, sl.ChipsPerHost))
	}
	return nil, field.Invalid(opts.Child("resources").Key(rayvocab.ResourceTPU), need,
		fmt.Sprintf("no single-host %s slice on GKE has that many chips (single-host shapes: %s); give the deployment a topology", gen.Name, strings.Join(fits, ", ")))
}

// startReplicas is how many replicas a deployment starts with: its
// num_replicas, or with autoscaling its initial (else minimum) count, at
// least 1.
func startReplicas(d serveconfig.Deployment) int {
	a := d.AutoscalingConfig
	switch {
	case a != nil && a.InitialReplicas != nil:
		return max(*a.InitialReplicas, 1)
	case a != nil && a.MinReplicas != nil:
		return max(*a.MinReplicas, 1)
	case a != nil, d.NumReplicas.IsAuto():
		return 1
	}
	n, _ := d.NumReplicas.Count()
	return max(n, 1)
}
