package kuberay

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// The GKE node labels and taints that select a capacity class, as GKE
// documents them (see docs/kubernetes.md, "Capacity classes"):
//
//	on-demand    nothing
//	spot         nodeSelector gke-spot: "true", toleration gke-spot=true:NoSchedule
//	reservation  nodeSelector reservation-name: <name>, reservation-affinity: specific
//	             (+ reservation-project: <project> for a shared reservation)
//	flex-start   nodeSelector gke-flex-start: "true"
//
// Flex-start with queued provisioning (node pools created with
// --enable-queued-provisioning) is not a class of its own: such a pool
// gets nodes only through a ProvisioningRequest, which Kueue's
// provisioning admission check creates, and the Kueue ResourceFlavor that
// stands for the pool carries its cloud.google.com/gke-queued toleration
// and labels into the pod templates on admission. raytpu renders nothing
// for it (class on-demand); rendering the toleration without a
// ProvisioningRequest would give the pods no node.
const (
	labelGKESpot             = "cloud.google.com/gke-spot"
	labelGKEFlexStart        = "cloud.google.com/gke-flex-start"
	labelReservationName     = "cloud.google.com/reservation-name"
	labelReservationAffinity = "cloud.google.com/reservation-affinity"
	labelReservationProject  = "cloud.google.com/reservation-project"
)

// capacitySelector is the node selector capacity c adds to a TPU worker
// group's pods (nil for on-demand).
func capacitySelector(c placement.Capacity) map[string]string {
	switch c.EffectiveClass() {
	case placement.CapacitySpot:
		return map[string]string{labelGKESpot: "true"}
	case placement.CapacityFlexStart:
		return map[string]string{labelGKEFlexStart: "true"}
	case placement.CapacityReservation:
		sel := map[string]string{labelReservationName: c.Reservation, labelReservationAffinity: "specific"}
		if c.ReservationProject != "" {
			sel[labelReservationProject] = c.ReservationProject
		}
		return sel
	}
	return nil
}

// capacityTolerations are the tolerations capacity c adds to a TPU worker
// group's pods: Spot nodes' taint, which node auto-provisioning and
// Autopilot put on Spot pools (harmless where a pool has none).
func capacityTolerations(c placement.Capacity) []*corev1ac.TolerationApplyConfiguration {
	if c.EffectiveClass() != placement.CapacitySpot {
		return nil
	}
	return []*corev1ac.TolerationApplyConfiguration{corev1ac.Toleration().
		WithKey(labelGKESpot).WithOperator(corev1.TolerationOpEqual).WithValue("true").WithEffect(corev1.TaintEffectNoSchedule)}
}

// withCapacity adds capacity c's node selector and tolerations to pod, a
// TPU worker group's pod spec whose node selector is its own map.
func withCapacity(pod *corev1ac.PodSpecApplyConfiguration, c placement.Capacity) {
	sel := capacitySelector(c)
	if len(sel) > 0 {
		pod.WithNodeSelector(sel)
	}
	if t := capacityTolerations(c); len(t) > 0 {
		pod.WithTolerations(t...)
	}
}

// planCapacity is the capacity plan p is rendered with under options o:
// the options' when set, else the plan's. Both set and different is an
// error at options.capacity: a backend's capacity never silently
// replaces the one a plan asks for. Options' capacity is also checked
// against the plan's slices (flex-start has no TPU v4).
func planCapacity(p *placement.Plan, o Options) (placement.Capacity, field.ErrorList) {
	if o.Capacity == (placement.Capacity{}) {
		return p.Capacity, nil
	}
	if p.Capacity != (placement.Capacity{}) && p.Capacity.String() != o.Capacity.String() {
		return o.Capacity, field.ErrorList{field.Invalid(field.NewPath("options", "capacity"), o.Capacity.String(),
			"the plan asks for capacity "+p.Capacity.String()+" (plan.capacity): render it with no capacity option, or the same")}
	}
	return o.Capacity, o.Capacity.ValidateSlices(field.NewPath("plan", "slices"), p.Slices)
}
