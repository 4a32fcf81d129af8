package placement_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

func TestCapacityValidate(t *testing.T) {
	t.Parallel()
	type ref struct {
		path string
		typ  field.Type
	}
	for _, c := range []struct {
		cap   placement.Capacity
		class placement.CapacityClass
		want  []ref
	}{
		{placement.Capacity{}, placement.CapacityOnDemand, nil},
		{placement.Capacity{Class: placement.CapacitySpot}, placement.CapacitySpot, nil},
		{placement.Capacity{Class: placement.CapacityFlexStart}, placement.CapacityFlexStart, nil},
		{placement.Capacity{Reservation: "tpu-res"}, placement.CapacityReservation, nil},
		{placement.Capacity{Class: placement.CapacityReservation, Reservation: "tpu-res", ReservationProject: "acme-tpu-prod"}, placement.CapacityReservation, nil},
		{placement.Capacity{Class: placement.CapacitySpot, Reservation: "tpu-res"}, placement.CapacitySpot, []ref{{"capacity.class", field.TypeNotSupported}}},
		{placement.Capacity{Class: placement.CapacityFlexStart, ReservationProject: "acme-tpu-prod"}, placement.CapacityFlexStart, []ref{{"capacity.class", field.TypeNotSupported}}},
		{placement.Capacity{Class: "Spot"}, "Spot", []ref{{"capacity.class", field.TypeNotSupported}}},
		{placement.Capacity{Class: placement.CapacityReservation}, placement.CapacityReservation, []ref{{"capacity.reservation", field.TypeRequired}}},
		{placement.Capacity{ReservationProject: "acme-tpu-prod"}, placement.CapacityReservation, []ref{{"capacity.reservation", field.TypeRequired}}},
		{placement.Capacity{Reservation: "projects/acme/reservations/r", ReservationProject: "x"}, placement.CapacityReservation,
			[]ref{{"capacity.reservation", field.TypeInvalid}, {"capacity.reservationProject", field.TypeInvalid}}},
		{placement.Capacity{Reservation: "-r"}, placement.CapacityReservation, []ref{{"capacity.reservation", field.TypeInvalid}}},
	} {
		t.Run(c.cap.String(), func(t *testing.T) {
			t.Parallel()
			if got := c.cap.EffectiveClass(); got != c.class {
				t.Errorf("EffectiveClass = %s, want %s", got, c.class)
			}
			var got []ref
			for _, e := range c.cap.Validate(field.NewPath("capacity")) {
				got = append(got, ref{e.Field, e.Type})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Validate: %v, want %v", got, c.want)
			}
		})
	}
}

func TestCapacityValidateSlices(t *testing.T) {
	t.Parallel()
	var groups []*placement.SliceGroup
	for _, s := range []placement.SliceSpec{{Accelerator: "v6e", Topology: "4x4"}, {Accelerator: "v4", Topology: "2x2x2"}, {Accelerator: "v5litepod", Topology: "2x4"}} {
		g, err := s.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g)
	}
	path := field.NewPath("plan", "slices")
	if errs := (placement.Capacity{Class: placement.CapacitySpot}).ValidateSlices(path, groups); len(errs) != 0 {
		t.Errorf("spot: %v", errs)
	}
	errs := placement.Capacity{Class: placement.CapacityFlexStart}.ValidateSlices(path, groups)
	if len(errs) != 1 || errs[0].Field != "plan.slices[1].generation" || errs[0].Type != field.TypeNotSupported ||
		errs[0].BadValue != "v4" || !slices.Equal(errs[0].ValidValues, placement.FlexStartGenerations()) {
		t.Errorf("flex-start on v4: %v, want one NotSupported at plan.slices[1].generation", errs)
	}
}

func ExampleCapacity_Validate() {
	for _, c := range []placement.Capacity{
		{Class: placement.CapacitySpot},
		{Reservation: "tpu-res", ReservationProject: "acme-tpu-prod"},
		{Class: placement.CapacitySpot, Reservation: "tpu-res"},
	} {
		fmt.Printf("%s: %v\n", c, c.Validate(field.NewPath("capacity")).Err())
	}
	// Output:
	// spot: <nil>
	// reservation tpu-res (project acme-tpu-prod): <nil>
	// spot tpu-res: capacity.class: Unsupported value: "spot": reservation "tpu-res" is set: only class reservation consumes a specific reservation (spot capacity never does on GKE); drop it, or use class reservation (supported: "reservation")
}
