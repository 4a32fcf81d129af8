package backend

import "errors"

// Sentinels for errors.Is. The first four are the contract's neutral
// errors: every backend's errors match them, whatever the backend's own
// types and sentinels (a backend may keep its own sentinels, as long as
// they match these: kuberay.ErrAlreadyExists is ErrAlreadyExists). A caller
// that switches backends keeps its error handling.
var (
	// ErrNotFound: the backend has nothing of that name (an application,
	// a run, a cluster).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: the name is taken by something else on the backend
	// (a run id that names the run of another plan); nothing was changed.
	// Choose another name.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalidPlan matches every *InvalidPlanError: the plan breaks a
	// rule of the plan format or of the backend, and was refused before
	// anything was done. Fix the plan.
	ErrInvalidPlan = errors.New("invalid plan")
	// ErrUnsupported: the backend does not run plans of this kind, or does
	// not yet have a feature the plan uses (each backend documents which).
	// Nothing was done; another backend may run the plan unchanged.
	ErrUnsupported = errors.New("not supported by this backend")
	// ErrNilBackend: a method was called on a nil backend (a nil
	// *sim.Cluster or *raybackend.Backend, say, or the zero value of a
	// backend that needs its constructor), or a front end was given one,
	// typed or untyped. Nothing was done. Pass the value the backend's
	// constructor returns.
	ErrNilBackend = errors.New("nil backend")

	// ErrRunFailed matches every *RunError: the run ended FAILED or STOPPED.
	ErrRunFailed = errors.New("run did not succeed")
	// ErrPlacement matches every *PlacementError.
	ErrPlacement = errors.New("plan cannot be placed")
	// ErrDeployFailed matches a *ServiceError of an application that
	// failed to deploy (a constructor that raised, a bad import path).
	ErrDeployFailed = errors.New("application failed to deploy")
	// ErrUnhealthy matches a *ServiceError of an unhealthy application.
	ErrUnhealthy = errors.New("application is unhealthy")
)
