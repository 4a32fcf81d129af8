package backend_test

import (
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// The contract's exported functions and methods are total: nil receivers,
// nil and zero arguments get an error or a plain answer, never a panic.
func TestTotalOverNilAndZero(t *testing.T) {
	t.Parallel()
	var nilOutcome *backend.Outcome
	if nilOutcome.Succeeded() {
		t.Error("a nil outcome succeeded")
	}
	errs := map[string]error{
		"nil *RunError":                 (*backend.RunError)(nil),
		"RunError without outcome":      &backend.RunError{},
		"nil *PlacementError":           (*backend.PlacementError)(nil),
		"zero PlacementError":           &backend.PlacementError{},
		"zero InvalidPlanError":         &backend.InvalidPlanError{},
		"nil *InvalidPlanError":         (*backend.InvalidPlanError)(nil),
		"nil *ServiceError":             (*backend.ServiceError)(nil),
		"ServiceError without a status": &backend.ServiceError{},
	}
	for name, err := range errs {
		if err.Error() == "" {
			t.Errorf("%s: empty message", name)
		}
		_ = errors.Unwrap(err)
	}
	if errors.Unwrap(&backend.InvalidPlanError{}) != nil {
		t.Error("an InvalidPlanError without errors unwraps to a non-nil error")
	}
	if !errors.Is(&backend.RunError{}, backend.ErrRunFailed) || !errors.Is(&backend.PlacementError{}, backend.ErrPlacement) {
		t.Error("a zero error does not match its sentinel")
	}
	for _, p := range []*placement.Plan{nil, {}} {
		if err := backend.CheckPlan("", p); err == nil {
			t.Errorf("CheckPlan(%v): no error", p)
		}
		if err := backend.CheckPlan("x", p, backend.RunKinds()...); err == nil {
			t.Errorf("CheckPlan(%v, run kinds): no error", p)
		}
	}
}
