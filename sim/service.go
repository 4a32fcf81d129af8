package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

var _ backend.Server = (*Cluster)(nil)

// service is an application deployed on the simulated cluster: its plan's
// bytes and where its slice groups stand.
type service struct {
	plan   []byte
	status *backend.ServiceStatus
	held   []*SlicePlacement
}

// Deploy makes the cluster a backend.Server: it places every slice group
// of an application plan (one per replica of a deployment with a
// topology) and keeps them placed until Delete, as the replicas of a
// running application hold their slices. Deploying the same plan again
// changes nothing; deploying a changed plan of the same name releases the
// old placement and places the new one. Nothing runs: the status is
// SIMULATED.
//
// A plan is checked first (backend.CheckPlan): one of another kind is an
// error matching backend.ErrUnsupported, a malformed one a
// *backend.InvalidPlanError; neither is placed.
//
// A diagnosis with an error (a replica whose slice cannot be reserved)
// comes back as a *backend.PlacementError together with the status; the
// groups that could be placed stay held, as Ray would keep them while the
// stuck replica waits.
func (c *Cluster) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := c.usable("Deploy"); err != nil {
		return nil, err
	}
	if err := backend.CheckPlan(BackendName, p, placement.KindApplication); err != nil {
		return nil, err
	}
	if err := c.usableCtx(ctx, "Deploy"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := p.MarshalIndent()
	if err != nil {
		return nil, err
	}
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	if old, ok := c.services[p.Name]; ok {
		if bytes.Equal(old.plan, raw) {
			return c.statusOf(old), placementErr(old.status)
		}
		c.releaseService(old)
		delete(c.services, p.Name)
	}
	res, err := c.Place(ctx, p)
	if err != nil {
		if res != nil {
			c.releaseService(&service{held: res.Slices})
		}
		return nil, err
	}
	svc := &service{
		plan: raw,
		held: res.Slices,
		status: &backend.ServiceStatus{
			Backend: BackendName, Name: p.Name, State: backend.ServiceSimulated,
			Message:   "replicas' slices placed on the simulated cluster; nothing runs",
			Landings:  res.Landings(p),
			Diagnosis: res.Diagnosis,
		},
	}
	if c.services == nil {
		c.services = map[string]*service{}
	}
	c.services[p.Name] = svc
	return c.statusOf(svc), placementErr(svc.status)
}

// Wait returns the application's status at once: on the simulator an
// application never changes after Deploy. opts.OnStatus sees it once.
func (c *Cluster) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	if err := c.usableCtx(ctx, "Wait"); err != nil {
		return nil, err
	}
	st, err := c.Status(ctx, name)
	if err != nil {
		return nil, err
	}
	if opts.OnStatus != nil {
		opts.OnStatus(st)
	}
	return st, placementErr(st)
}

// Status returns the application's status; backend.ErrNotFound when none
// of that name is deployed.
func (c *Cluster) Status(_ context.Context, name string) (*backend.ServiceStatus, error) {
	if err := c.usable("Status"); err != nil {
		return nil, err
	}
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	svc, ok := c.services[name]
	if !ok {
		return nil, fmt.Errorf("sim: application %q: %w", name, backend.ErrNotFound)
	}
	return c.statusOf(svc), nil
}

// Delete releases every slice group the application holds; other
// applications keep theirs. backend.ErrNotFound when none of that name is
// deployed.
func (c *Cluster) Delete(_ context.Context, name string) error {
	if err := c.usable("Delete"); err != nil {
		return err
	}
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	svc, ok := c.services[name]
	if !ok {
		return fmt.Errorf("sim: application %q: %w", name, backend.ErrNotFound)
	}
	delete(c.services, name)
	return c.releaseService(svc)
}

func (c *Cluster) releaseService(svc *service) error {
	var errs []error
	for _, sp := range svc.held {
		errs = append(errs, c.Release(sp))
	}
	return errors.Join(errs...)
}

// statusOf copies the status, so callers cannot change the cluster's
// record. Its Time stays zero: the simulator's answers do not depend on
// when they are asked.
func (c *Cluster) statusOf(svc *service) *backend.ServiceStatus {
	st := *svc.status
	return &st
}

func placementErr(st *backend.ServiceStatus) error {
	if !st.Diagnosis.HasErrors() {
		return nil
	}
	return &backend.PlacementError{Backend: st.Backend, Name: st.Name, Diagnosis: st.Diagnosis}
}
