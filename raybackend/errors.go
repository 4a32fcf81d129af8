package raybackend

import (
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
)

// refuse is the backend's refusal of plan p, before anything is sent, for
// breaking a rule of its own: a *backend.InvalidPlanError with errs, which
// also matches ray.ErrInvalid, as the backend's refusals did before the
// contract had a neutral sentinel for them.
func refuse(p *placement.Plan, errs ...*field.Error) error {
	return &refusal{&backend.InvalidPlanError{Backend: Name, Name: p.Name, Errs: errs}}
}

type refusal struct{ plan *backend.InvalidPlanError }

func (r *refusal) Error() string   { return r.plan.Error() }
func (r *refusal) Unwrap() []error { return []error{r.plan, ray.ErrInvalid} }

// neutral makes an error of the ray client also match the contract's
// neutral sentinel for it: ray.ErrNotFound backend.ErrNotFound,
// ray.ErrAlreadyExists backend.ErrAlreadyExists. Its message is unchanged.
func neutral(err error) error {
	for _, m := range [...]struct{ transport, contract error }{
		{ray.ErrNotFound, backend.ErrNotFound},
		{ray.ErrAlreadyExists, backend.ErrAlreadyExists},
	} {
		if errors.Is(err, m.transport) && !errors.Is(err, m.contract) {
			return &neutralError{err: err, contract: m.contract}
		}
	}
	return err
}

type neutralError struct{ err, contract error }

func (e *neutralError) Error() string   { return e.err.Error() }
func (e *neutralError) Unwrap() []error { return []error{e.err, e.contract} }

// usable is the guard every exported method of Backend starts with: a nil
// *Backend (a typed nil behind backend.Runner or backend.Server) or one
// not made by New (it has no dashboard client) is an error matching
// backend.ErrNilBackend, never a panic.
func (b *Backend) usable(method string) error {
	if b == nil {
		return fmt.Errorf("raybackend: %s on a nil *Backend; use the one raybackend.New returns: %w", method, backend.ErrNilBackend)
	}
	if b.client == nil {
		return fmt.Errorf("raybackend: %s on a Backend not made by raybackend.New (it has no dashboard client): %w", method, backend.ErrNilBackend)
	}
	return nil
}
