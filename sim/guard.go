package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
)

// usable is the guard every exported method of Cluster starts with: a nil
// *Cluster (a typed nil behind backend.Runner or backend.Server) or one
// not made by NewCluster is an error matching backend.ErrNilBackend, never
// a panic.
func (c *Cluster) usable(method string) error {
	if c == nil {
		return fmt.Errorf("sim: %s on a nil *Cluster; use the one sim.NewCluster returns: %w", method, backend.ErrNilBackend)
	}
	if c.groups == nil {
		return fmt.Errorf("sim: %s on a Cluster not made by sim.NewCluster (it has no hosts): %w", method, backend.ErrNilBackend)
	}
	return nil
}

// usableCtx is usable for a method that takes a context, which must not be
// nil.
func (c *Cluster) usableCtx(ctx context.Context, method string) error {
	if err := c.usable(method); err != nil {
		return err
	}
	if ctx == nil {
		return errors.New("sim: " + method + ": nil context; pass context.Background() or a request's context")
	}
	return nil
}

// ok reports whether c is usable, for the methods that have no error to
// return: they answer with their zero value.
func (c *Cluster) ok() bool { return c != nil && c.groups != nil }
