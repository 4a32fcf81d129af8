package backend_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

func TestErrorsMatchTheirSentinels(t *testing.T) {
	t.Parallel()
	failed := &backend.Outcome{Backend: "ray", Ran: true, ID: "job-1", State: backend.StateFailed, Message: "WorkerGroupError"}
	diag := placement.Diagnosis{
		{Severity: placement.SeverityWarning, Code: "Pending", Message: "waits"},
		{Severity: placement.SeverityError, Code: "HeadReservationFailed", Message: "no free v4-16", Part: `deployment "llm" replica 2`},
	}
	deployFailed := &backend.ServiceStatus{Backend: "ray", Name: "chat", State: backend.ServiceDeployFailed, Message: "RuntimeError: boom"}
	deploying := &backend.ServiceStatus{Backend: "ray", Name: "chat", State: backend.ServiceDeploying, Message: "replica waits for its slice"}
	stuck := &backend.ServiceStatus{Backend: "ray", Name: "chat", State: backend.ServiceDeploying, Diagnosis: diag}
	spans := placement.Diagnosis{{Severity: placement.SeverityError, Code: placement.CodeSpansSlices, Message: "2 bundles landed on 2 slices"}}
	misplaced := &backend.ServiceStatus{Backend: "ray", Name: "chat", State: backend.ServiceRunning, Diagnosis: spans}
	cases := []struct {
		name    string
		err     error
		is      []error
		isNot   []error
		message []string
	}{
		{"run failed", fmt.Errorf("wrapped: %w", &backend.RunError{Outcome: failed}),
			[]error{backend.ErrRunFailed}, []error{backend.ErrPlacement, backend.ErrDeployFailed},
			[]string{"job-1", "FAILED", "WorkerGroupError"}},
		{"placement", &backend.PlacementError{Backend: "sim", Name: "chat", Diagnosis: diag},
			[]error{backend.ErrPlacement}, []error{backend.ErrRunFailed},
			[]string{`"chat"`, `HeadReservationFailed: deployment "llm" replica 2: no free v4-16`}},
		{"deploy failed", &backend.ServiceError{Status: deployFailed},
			[]error{backend.ErrDeployFailed}, []error{backend.ErrUnhealthy, context.DeadlineExceeded},
			[]string{"DEPLOY_FAILED", "RuntimeError: boom"}},
		{"wait cut short", &backend.ServiceError{Status: deploying, Err: context.DeadlineExceeded},
			[]error{context.DeadlineExceeded}, []error{backend.ErrDeployFailed, backend.ErrUnhealthy},
			[]string{"DEPLOYING", "deadline exceeded", "replica waits for its slice"}},
		{"stuck", &backend.ServiceError{Status: stuck, Err: &backend.PlacementError{Backend: "ray", Name: "chat", Diagnosis: diag}},
			[]error{backend.ErrPlacement}, []error{backend.ErrDeployFailed, context.DeadlineExceeded},
			[]string{`application "chat" is DEPLOYING and stuck`, "no free v4-16"}},
		{"running misplaced", &backend.ServiceError{Status: misplaced, Err: &backend.PlacementError{Backend: "ray", Name: "chat", Diagnosis: spans}},
			[]error{backend.ErrPlacement}, []error{backend.ErrDeployFailed, backend.ErrUnhealthy},
			[]string{`application "chat" is RUNNING but its TPU bundles are misplaced`, "SpansSlices"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, target := range c.is {
				if !errors.Is(c.err, target) {
					t.Errorf("errors.Is(%v, %v) = false, want true", c.err, target)
				}
			}
			for _, target := range c.isNot {
				if errors.Is(c.err, target) {
					t.Errorf("errors.Is(%v, %v) = true, want false", c.err, target)
				}
			}
			for _, m := range c.message {
				if !strings.Contains(c.err.Error(), m) {
					t.Errorf("message %q lacks %q", c.err.Error(), m)
				}
			}
		})
	}
	if strings.Contains((&backend.PlacementError{Backend: "sim", Name: "x", Diagnosis: diag}).Error(), "waits") {
		t.Error("a PlacementError lists warnings; it should name only the errors")
	}
}

func TestKindsRunToCompletion(t *testing.T) {
	t.Parallel()
	want := map[placement.Kind]bool{
		placement.KindJaxTrainer: true, placement.KindPipeline: true, placement.KindBatchInference: true,
		placement.KindApplication: false, placement.KindSlicePlacementGroup: false,
	}
	for _, k := range placement.Kinds() {
		if got := k.RunsToCompletion(); got != want[k] {
			t.Errorf("%s.RunsToCompletion() = %v, want %v", k, got, want[k])
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("Kinds() lacks %v", want)
	}
}
