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
)
