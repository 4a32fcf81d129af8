package serve

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/tpu"
)

// Kind is the accelerator kind of an [AcceleratorConfig].
type Kind string

// TPU is the only kind raytpu compiles (Serve LLM's TPUConfig kind "tpu").
const TPU Kind = "tpu"

// AcceleratorConfig puts a deployment on TPUs. It mirrors Serve LLM's
// LLMConfig accelerator_type together with accelerator_config
// TPUConfig(kind="tpu", topology=...).
type AcceleratorConfig struct {
	// Kind of accelerator. Optional. Default: TPU (the only kind).
	Kind Kind `json:"kind,omitempty"`
	// Accelerator is the TPU generation in any accepted spelling (v6e,
	// TPU-V6E, v5litepod). Required with a Topology. Without one, it sets
	// the replica actor's accelerator_type.
	Accelerator string `json:"accelerator_type,omitempty"`
	// Topology of the slice each replica owns, e.g. "4x4" or "2x2x2".
	// Optional. Default: none (replicas take TPU through RayActorOptions
	// or PlacementGroupBundles like any resource).
	Topology string `json:"topology,omitempty"`
	// HeadReservationTimeout bounds how long a starting replica waits for
	// a free slice (slice_placement_group's head_reservation_timeout_s);
	// past it the replica fails to start with a "slice reservation
	// pending" error and Serve retries it. Needs a Topology; a negative
	// timeout is refused. Optional. Default: 0, Ray's 100s. In JSON and
	// YAML it is head_reservation_timeout_s, seconds as a number (30,
	// 2.5), Ray's name and unit.
	HeadReservationTimeout time.Duration `json:"-"`
	// NoHeadReservationTimeout makes a starting replica wait for a free
	// slice indefinitely; exclusive with HeadReservationTimeout. Needs a
	// Topology. In JSON and YAML it is head_reservation_timeout_s: -1.
	// Optional. Default: false.
	NoHeadReservationTimeout bool `json:"-"`
}

// hasTopology reports whether each replica of d owns a slice.
func (d *Deployment) hasTopology() bool {
	return d.AcceleratorConfig != nil && d.AcceleratorConfig.Topology != ""
}

// validateAccelerator checks the accelerator config and the options it
// rules out, and returns Ray's accelerator type ("" when unknown).
func (d *Deployment) validateAccelerator(p *field.Path) (string, field.ErrorList) {
	a := d.AcceleratorConfig
	if a == nil {
		return "", nil
	}
	// The path is built only for an error.
	ap := func() *field.Path { return p.Child("accelerator_config") }
	var errs field.ErrorList
	if a.Accelerator == "" && a.Topology == "" {
		errs = append(errs, field.Required(ap().Child("accelerator_type"),
			"an accelerator_config without accelerator_type or topology says nothing: set accelerator_type (e.g. v6e) for TPU nodes, and topology (e.g. 4x4) for a whole slice per replica, or leave accelerator_config unset"))
	}
	if a.Kind != "" && a.Kind != TPU {
		errs = append(errs, field.NotSupported(ap().Child("kind"), string(a.Kind), []string{string(TPU)}).
			WithDetail("raytpu compiles TPU deployments only"))
	}
	var accelType string
	if a.Accelerator == "" {
		if a.Topology != "" {
			errs = append(errs, field.Required(ap().Child("accelerator_type"), "accelerator_type must be provided when specifying a TPU topology (e.g. v6e or TPU-V6E)"))
		}
	} else if g, ok := tpu.LookupGeneration(a.Accelerator); ok {
		accelType = g.RayAcceleratorType()
	} else if a.Topology == "" { // with a topology, the slice compile reports it
		_, gerr := tpu.ResolveGeneration(a.Accelerator, ap().Child("accelerator_type"))
		errs = append(errs, gerr)
	}
	if o := d.RayActorOptions; o != nil && o.AcceleratorType != "" && accelType != "" && o.AcceleratorType != accelType {
		errs = append(errs, field.Invalid(p.Child("ray_actor_options", "accelerator_type"), o.AcceleratorType,
			fmt.Sprintf("the deployment's accelerator is %s; leave accelerator_type empty or set it to %s", accelType, accelType)))
	}
	if a.Topology == "" {
		if a.HeadReservationTimeout != 0 || a.NoHeadReservationTimeout {
			errs = append(errs, field.Forbidden(ap().Child("head_reservation_timeout_s"), "needs a topology: only a replica that owns a slice reserves one"))
		}
		return accelType, errs
	}
	switch t := a.HeadReservationTimeout; {
	case t < 0:
		errs = append(errs, field.Invalid(ap().Child("head_reservation_timeout_s"), t.Seconds(),
			"must be 0 or more seconds (0: Ray's 100s); to wait indefinitely set NoHeadReservationTimeout (head_reservation_timeout_s: -1 in a file)"))
	case t > 0 && a.NoHeadReservationTimeout:
		errs = append(errs, field.Forbidden(ap().Child("head_reservation_timeout_s"), "NoHeadReservationTimeout is set: the replica waits indefinitely; set one of the two"))
	}
	if o := d.RayActorOptions; o != nil && o.Resources[rayvocab.ResourceTPU] > 0 {
		errs = append(errs, field.Forbidden(p.Child("ray_actor_options", "resources").Key(rayvocab.ResourceTPU),
			"with a topology the replica actor holds no TPU: the slice's bundles do"))
	}
	if len(d.PlacementGroupBundleLabelSelector) > 0 {
		errs = append(errs, field.Forbidden(p.Child("placement_group_bundle_label_selector"),
			"with a topology the replica's slice pins its bundles to one slice itself"))
	}
	// Serve LLM takes the first TPU bundle as the worker bundle and
	// requires every TPU bundle to be identical.
	var first map[string]float64
	for i, b := range d.PlacementGroupBundles {
		if b[rayvocab.ResourceTPU] <= 0 {
			continue
		}
		if first == nil {
			first = b
		} else if !maps.Equal(first, b) {
			errs = append(errs, field.Invalid(p.Child("placement_group_bundles").Index(i), fmtBundle(b),
				"heterogeneous TPU bundles are not supported when a topology is set: every TPU bundle must equal "+fmtBundle(first)))
		}
	}
	if len(d.PlacementGroupBundles) > 0 && first == nil {
		errs = append(errs, field.Invalid(p.Child("placement_group_bundles"), len(d.PlacementGroupBundles),
			"with a topology the bundles describe the slice's worker bundle and need a positive TPU"))
	}
	return accelType, errs
}

// workerBundle is the per-host bundle of a deployment's slice: its first TPU
// bundle, or Serve LLM's default bundle {accelerator_type:<type>: 0.001},
// to which slice placement adds TPU (chips per host) and CPU: 1. accelType
// is Ray's accelerator type of the deployment ("" when the accelerator is
// unknown: no default bundle, and placement reports the accelerator).
// Placement copies the bundle and writes neither it nor the user's.
func (d *Deployment) workerBundle(accelType string) map[string]float64 {
	for _, b := range d.PlacementGroupBundles {
		if b[rayvocab.ResourceTPU] > 0 {
			return b
		}
	}
	if accelType == "" {
		return nil
	}
	return map[string]float64{rayvocab.AcceleratorTypeResource(accelType): rayvocab.AcceleratorConstraintAmount}
}

// compileSlices resolves the slice each replica of a deployment with a
// topology owns, and checks the replicas against the limits: n replicas
// after before such replicas in the deployments above. accelType is Ray's
// accelerator type of the deployment ("" when unknown). A nil shape with
// no error is a replica count that validate reports.
func (d *Deployment) compileSlices(p *field.Path, accelType string, before int) (*placement.Shape, int, field.ErrorList) {
	strategy := d.PlacementGroupStrategy
	if strategy == "" {
		strategy = placement.Pack // Serve LLM's placement strategy default
	}
	shape, errs := d.sliceShape(p, accelType, strategy)
	if len(errs) > 0 {
		return nil, 0, errs
	}
	n := d.MaxReplicas()
	if n > placement.MaxReplicas {
		return nil, 0, nil // validate reports it
	}
	if e := d.sliceReplicaLimit(p, n, before, shape.BundlesPerSlice); e != nil {
		return nil, 0, field.ErrorList{e}
	}
	return shape, n, nil
}

// buildSlices appends a slice group of shape for each of the n replicas of
// a checked deployment to groups, and returns the reservation its replicas
// read from user_config.
func (d *Deployment) buildSlices(shape *placement.Shape, n int, groups []*placement.SliceGroup) ([]*placement.SliceGroup, serveconfig.SliceReservation, field.ErrorList) {
	from := len(groups)
	for i := range n {
		// Each replica gets a group of its own.
		g, errs := shape.Group(1)
		if len(errs) > 0 {
			return groups[:from], serveconfig.SliceReservation{}, errs
		}
		g.Part = placement.Part{Role: placement.RoleReplica, Name: d.Name, Index: i}
		groups = append(groups, g)
	}
	one := groups[from]
	return groups, serveconfig.SliceReservation{
		Version:                 serveconfig.SliceReservationVersion,
		Topology:                one.Topology,
		AcceleratorVersion:      one.AcceleratorVersion,
		AcceleratorType:         one.AcceleratorType,
		PodType:                 one.PodType,
		NumHosts:                one.HostsPerSlice,
		ChipsPerHost:            one.ChipsPerHost,
		NumBundles:              one.BundlesPerSlice,
		ResourcesPerBundle:      maps.Clone(one.BundleResources),
		Strategy:                string(one.Strategy),
		HeadReservationTimeoutS: one.HeadReservationTimeoutSeconds,
	}, nil
}

func fmtBundle(b map[string]float64) string {
	s := "{"
	for i, k := range slices.Sorted(maps.Keys(b)) {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %g", k, b[k])
	}
	return s + "}"
}

// sliceReplicaLimit is servecheck.SliceReplicaLimit at the deployment's
// field that set n, below p.
func (d *Deployment) sliceReplicaLimit(p *field.Path, n, before, perSlice int) *field.Error {
	return servecheck.SliceReplicaLimit(func() *field.Path {
		if d.AutoscalingConfig != nil && d.AutoscalingConfig.MaxReplicas > 0 {
			return p.Child("autoscaling_config", "max_replicas")
		}
		return p.Child("num_replicas")
	}, n, before, perSlice)
}
