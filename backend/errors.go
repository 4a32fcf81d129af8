package backend

import "errors"

// Sentinels for errors.Is.
var (
	// ErrRunFailed matches every *RunError: the run ended FAILED or STOPPED.
	ErrRunFailed = errors.New("run did not succeed")
	// ErrPlacement matches every *PlacementError.
	ErrPlacement = errors.New("plan cannot be placed")
	// ErrUnsupported: the backend cannot run a plan of this kind.
	ErrUnsupported = errors.New("plan kind not supported by this backend")
	// ErrNotFound: the backend has no application of that name.
	ErrNotFound = errors.New("no such application")
	// ErrDeployFailed matches a *ServiceError of an application that
	// failed to deploy (a constructor that raised, a bad import path).
	ErrDeployFailed = errors.New("application failed to deploy")
	// ErrUnhealthy matches a *ServiceError of an unhealthy application.
	ErrUnhealthy = errors.New("application is unhealthy")
)
