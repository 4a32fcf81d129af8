package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/raytpu/raytpu/placement"
)

// Server deploys plans that serve until they are deleted
// (placement.KindApplication: a Ray Serve application) and follows them.
//
// Deploy is declarative: deploying the same plan again changes nothing,
// deploying a changed plan of the same name updates the application, and
// deploying or deleting one application leaves every other application
// on the backend running. Deploy checks the plan first (see CheckPlan): a
// plan that is not an application is ErrUnsupported, a malformed one an
// *InvalidPlanError, and neither deploys anything.
type Server interface {
	// Deploy creates or updates the plan's application and returns its
	// status once the backend has accepted it (Wait follows it to RUNNING).
	Deploy(ctx context.Context, p *placement.Plan) (*ServiceStatus, error)
	// Wait follows the named application until it is RUNNING. An
	// application that failed is a *ServiceError; a ctx that ends first
	// returns a *ServiceError holding the last status seen, which says why
	// it is not running yet. A backend that can see where the replicas'
	// TPU bundles landed returns the status with an error matching
	// ErrPlacement when the application is RUNNING on bundles spread over
	// several slices (its first collective across them would hang).
	Wait(ctx context.Context, name string, opts WaitOptions) (*ServiceStatus, error)
	// Status reads the named application's status; ErrNotFound when the
	// backend has none of that name.
	Status(ctx context.Context, name string) (*ServiceStatus, error)
	// Delete removes the named application and frees what it held;
	// ErrNotFound when the backend has none of that name.
	Delete(ctx context.Context, name string) error
}

// WaitOptions tune a Wait. The zero value is valid.
type WaitOptions struct {
	// OnStatus, if set, is called with the first status seen and with
	// every status that differs from the one before. Optional.
	OnStatus func(*ServiceStatus)
	// StuckAfter is how long an application may stay DEPLOYING before a
	// backend that can read the cluster diagnoses it: once it has been
	// DEPLOYING that long and the diagnosis finds a placement that waits
	// or can never be made (a pending or infeasible placement group, a
	// slice head no node offers), Wait returns a *ServiceError whose
	// Status.Diagnosis says so and whose Err is a *PlacementError. A
	// replica that is only slow to start (a model loading) is not stuck:
	// Wait goes on. Nor is a placement that waits for capacity while the
	// cluster's autoscaler is starting nodes (a backend that can read its
	// report says so): Wait goes on until they are up. Optional. Default: DefaultStuckAfter; negative: never
	// diagnose, wait until ctx ends. The simulator answers at once and
	// ignores it.
	StuckAfter time.Duration
}

// DefaultStuckAfter is WaitOptions.StuckAfter's default: past Ray Serve's
// own 30 s slow-scheduling warning and long enough for a slice head
// reservation to be retried.
const DefaultStuckAfter = 2 * time.Minute

// ServiceState is an application's state, in Ray Serve's terms.
type ServiceState string

// The states. ServiceSimulated is the simulator's: the replicas' slices are
// placed, nothing runs.
const (
	ServiceNotStarted   ServiceState = "NOT_STARTED"
	ServiceDeploying    ServiceState = "DEPLOYING"
	ServiceRunning      ServiceState = "RUNNING"
	ServiceDeployFailed ServiceState = "DEPLOY_FAILED"
	ServiceUnhealthy    ServiceState = "UNHEALTHY"
	ServiceDeleting     ServiceState = "DELETING"
	ServiceSimulated    ServiceState = "SIMULATED"
)

// ServiceStatus is what a backend reports about an application.
type ServiceStatus struct {
	// Backend names the backend: "sim", "ray", "kuberay".
	Backend string `json:"backend"`
	// Name of the application.
	Name string `json:"name"`
	// Ran is false when nothing runs: the simulator only places.
	Ran bool `json:"ran"`
	// State and Message are the application's, as the backend reports them.
	State   ServiceState `json:"state"`
	Message string       `json:"message,omitempty"`
	// Deployments are the application's deployments, by name.
	Deployments []DeploymentStatus `json:"deployments,omitempty"`
	// Landings say where every replica's slice bundles landed and
	// Diagnosis what that means (the simulator reports both).
	Landings  []placement.Landing `json:"landings,omitempty"`
	Diagnosis placement.Diagnosis `json:"diagnosis,omitempty"`
	// Time is when the status was read; zero on the simulator, whose
	// answers do not depend on time.
	Time time.Time `json:"time,omitzero"`
}

// DeploymentStatus is one deployment of an application.
type DeploymentStatus struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Replicas running out of wanted.
	Replicas       int `json:"replicas"`
	TargetReplicas int `json:"targetReplicas"`
}

// ServiceError is an application that failed to deploy or became
// unhealthy, or a Wait that ended (with its context) before it was
// RUNNING. It matches ErrDeployFailed or ErrUnhealthy by state, and the
// context's error when Err is set.
type ServiceError struct {
	Status *ServiceStatus
	// Err is the context's error when a Wait was cut short, or a
	// *PlacementError when the backend found the application stuck (see
	// WaitOptions.StuckAfter) or RUNNING with replicas whose TPU bundles
	// span slices; errors.Is(err, ErrPlacement) then holds.
	Err error
}

func (e *ServiceError) Error() string {
	if e == nil || e.Status == nil {
		if e != nil && e.Err != nil {
			return fmt.Sprintf("application status unknown (wait ended: %v)", e.Err)
		}
		return "application status unknown"
	}
	s := e.Status
	msg := fmt.Sprintf("%s: application %q is %s", s.Backend, s.Name, s.State)
	var stuck *PlacementError
	switch {
	case errors.As(e.Err, &stuck) && s.State == ServiceRunning:
		msg += " but its TPU bundles are misplaced"
	case errors.As(e.Err, &stuck):
		msg += " and stuck"
	case e.Err != nil:
		msg += fmt.Sprintf(" (wait ended: %v)", e.Err)
	}
	if s.Message != "" {
		msg += ": " + s.Message
	}
	if len(s.Diagnosis) > 0 {
		msg += "\n" + strings.TrimSuffix(s.Diagnosis.String(), "\n")
	}
	return msg
}

// Is maps the state onto ErrDeployFailed and ErrUnhealthy.
func (e *ServiceError) Is(target error) bool {
	if e == nil || e.Status == nil {
		return false
	}
	switch target {
	case ErrDeployFailed:
		return e.Status.State == ServiceDeployFailed
	case ErrUnhealthy:
		return e.Status.State == ServiceUnhealthy
	}
	return false
}

// Unwrap returns the context's error, if the wait was cut short.
func (e *ServiceError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
