package placement

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// CapacityClass says where the TPU capacity of a plan's slices comes
// from on GKE: what node pools the slices' hosts may land on.
type CapacityClass string

// The capacity classes.
const (
	// CapacityOnDemand is ordinary on-demand capacity: no capacity
	// selector at all (GKE's default).
	CapacityOnDemand CapacityClass = "on-demand"
	// CapacitySpot is Spot VMs: cheaper, and reclaimed with a 30 s notice.
	CapacitySpot CapacityClass = "spot"
	// CapacityReservation consumes one specific Compute Engine
	// reservation (Capacity.Reservation), optionally shared from another
	// project (Capacity.ReservationProject).
	CapacityReservation CapacityClass = "reservation"
	// CapacityFlexStart is flex-start VMs from GKE's Dynamic Workload
	// Scheduler (at most 7 days; TPU v5e, v5p and v6e).
	CapacityFlexStart CapacityClass = "flex-start"
)

// CapacityClasses lists every capacity class, the default first.
func CapacityClasses() []CapacityClass {
	return []CapacityClass{CapacityOnDemand, CapacitySpot, CapacityReservation, CapacityFlexStart}
}

// capacityClassNames are CapacityClasses as strings, for error lists.
func capacityClassNames() []string {
	out := make([]string, 0, 4)
	for _, c := range CapacityClasses() {
		out = append(out, string(c))
	}
	return out
}

// FlexStartGenerations are the TPU generations GKE's flex-start offers
// (GKE's Dynamic Workload Scheduler page: v5e, v5p and v6e; v3 and v4
// are not supported).
func FlexStartGenerations() []string { return []string{"v5e", "v5p", "v6e"} }

// Capacity is where the TPU slices of a plan come from: a class, and for
// CapacityReservation the reservation. It is set on a compiled plan
// (Plan.Capacity) or on a backend that renders for GKE (the kuberay
// backend's Options.Capacity, `raytpu render --capacity`); the zero value
// is on-demand capacity. The classes exclude one another, as GKE and its
// tools treat them: Spot or flex-start capacity never consumes a specific
// reservation. The json names are the paths of errors below "capacity".
type Capacity struct {
	// Class of the capacity. Default: CapacityReservation when
	// Reservation is set, else CapacityOnDemand.
	Class CapacityClass `json:"class,omitempty"`
	// Reservation is the name of the specific Compute Engine reservation
	// to consume (a lower-case RFC 1035 name of at most 63 characters):
	// required with CapacityReservation, refused with any other class.
	Reservation string `json:"reservation,omitempty"`
	// ReservationProject is the project that owns a shared reservation
	// (a project ID such as "acme-tpu-prod"); empty: the cluster's own
	// project. Only with Reservation.
	ReservationProject string `json:"reservationProject,omitempty"`
}

// EffectiveClass is the class c asks for, its default applied.
func (c Capacity) EffectiveClass() CapacityClass {
	switch {
	case c.Class != "":
		return c.Class
	case c.Reservation != "" || c.ReservationProject != "":
		return CapacityReservation
	}
	return CapacityOnDemand
}

// String is the capacity as `raytpu plan` prints it: "spot",
// "reservation tpu-res (project acme-tpu-prod)".
func (c Capacity) String() string {
	s := string(c.EffectiveClass())
	if c.Reservation != "" {
		s += " " + c.Reservation
	}
	if c.ReservationProject != "" {
		s += " (project " + c.ReservationProject + ")"
	}
	return s
}

var (
	// reservationNameRE is a Compute Engine resource name (RFC 1035).
	reservationNameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// projectIDRE is a Google Cloud project ID; domain-scoped IDs
	// (example.com:proj) cannot be a Kubernetes label value.
	projectIDRE = regexp.MustCompile(`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`)
)

// Validate reports every rule of c that is broken, at paths below path
// (capacity.class, capacity.reservation, capacity.reservationProject): a
// class that is not one of CapacityClasses, a reservation without its
// class or a class that consumes no reservation given one (GKE's Spot and
// flex-start capacity never consume a specific reservation), a
// reservation name or project that is not one. The zero Capacity is
// valid.
func (c Capacity) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	class := c.EffectiveClass()
	if !slices.Contains(CapacityClasses(), class) {
		return append(errs, field.NotSupported(path.Child("class"), string(c.Class), capacityClassNames()))
	}
	if class == CapacityReservation {
		if c.Reservation == "" {
			errs = append(errs, field.Required(path.Child("reservation"), "the name of the specific reservation to consume"))
		}
	} else if c.Reservation != "" || c.ReservationProject != "" {
		what := fmt.Sprintf("reservation %q", c.Reservation)
		if c.Reservation == "" {
			what = fmt.Sprintf("reservationProject %q", c.ReservationProject)
		}
		errs = append(errs, field.NotSupported(path.Child("class"), string(c.Class), []string{string(CapacityReservation)}).
			WithDetail(what+" is set: only class reservation consumes a specific reservation ("+string(class)+" capacity never does on GKE); drop it, or use class reservation"))
	}
	if c.Reservation != "" {
		if msg := reservationProblem(c.Reservation); msg != "" {
			errs = append(errs, field.Invalid(path.Child("reservation"), c.Reservation, msg))
		}
	}
	if c.ReservationProject != "" {
		if !projectIDRE.MatchString(c.ReservationProject) {
			errs = append(errs, field.Invalid(path.Child("reservationProject"), c.ReservationProject,
				"a project ID: 6 to 30 lower-case letters, digits and hyphens, starting with a letter (GKE puts it in the node label cloud.google.com/reservation-project)"))
		}
	}
	return errs
}

// reservationProblem says what is wrong with name as a reservation name,
// "" when nothing is.
func reservationProblem(name string) string {
	if rest, ok := strings.CutPrefix(name, "projects/"); ok {
		project, _, _ := strings.Cut(rest, "/")
		return fmt.Sprintf("the reservation's name alone: give its project %q as reservationProject", project)
	}
	if !reservationNameRE.MatchString(name) {
		return "a reservation name: at most 63 lower-case letters, digits and hyphens, starting with a letter and not ending with a hyphen"
	}
	return ""
}

// ValidateSlices reports the slice groups that capacity c cannot give,
// at the generation of each, below path (plan.slices[i].generation):
// flex-start offers only FlexStartGenerations (see CheckGeneration).
// Only the class is read: Validate checks the rest.
func (c Capacity) ValidateSlices(path *field.Path, groups []*SliceGroup) field.ErrorList {
	var errs field.ErrorList
	for i, g := range groups {
		if g == nil {
			continue
		}
		if e := c.CheckGeneration(path.Index(i).Child("generation"), g.Generation); e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

// CheckGeneration is nil when capacity c can give TPUs of generation
// (any name the catalog takes: v6e, trillium), else the error at path:
// flex-start offers only FlexStartGenerations. A backend checks each TPU
// host it renders outside the plan's slice groups with it.
func (c Capacity) CheckGeneration(path *field.Path, generation string) *field.Error {
	if c.EffectiveClass() != CapacityFlexStart {
		return nil
	}
	name := generation
	if gen, ok := tpu.LookupGeneration(generation); ok {
		name = gen.Name
	}
	if slices.Contains(FlexStartGenerations(), name) {
		return nil
	}
	return field.NotSupported(path, generation, FlexStartGenerations()).
		WithDetail("GKE's flex-start (Dynamic Workload Scheduler) offers TPU " + strings.Join(FlexStartGenerations(), ", ") + " only; use another capacity class for " + generation)
}
