package raybackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/serveconfig"
)

var _ backend.Server = (*Backend)(nil)

// Deploy deploys a Serve application plan through the dashboard's Serve
// REST API, leaving every other application running (see
// ray.Client.DeployServeApplication). A local working_dir or py_modules of
// the application's runtime_env is packaged and uploaded first and the
// config sent with its gcs:// URI, since Serve accepts only remote URIs;
// otherwise the compiled config is sent byte for byte. Redeploying the same
// plan changes nothing. When Serve is not running yet, this starts it with
// Ray's default proxy options; to choose them, start Serve first with
// ray.Client.DeployServeApplications.
//
// A deployment with a topology (its user_config carries a slice
// reservation, and the plan one slice group per replica) needs raytpu's
// replica runtime: Deploy checks that the reservations and the slice groups
// agree and that the runtime reads their format (a
// *backend.InvalidPlanError with a field error per disagreement before
// anything is sent otherwise, which matches backend.ErrInvalidPlan and
// ray.ErrInvalid), uploads the runtime as a single-file
// py_module and adds it to the application's runtime_env.py_modules (and to
// a slice deployment's own py_modules, which Serve would put in their
// place). The deployment's code imports it (see package serve).
func (b *Backend) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := b.usable("Deploy"); err != nil {
		return nil, err
	}
	st, err := b.deploy(ctx, p)
	return st, neutral(err)
}

func (b *Backend) deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if err := backend.CheckPlan(Name, p, placement.KindApplication); err != nil {
		return nil, err
	}
	// A copy whose fields are replaced, never written into: the plan's
	// config stays as it was compiled.
	app := p.Serve.Config
	sliceDeps, err := sliceDeployments(p, &app)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := b.uploadServeEnv(ctx, &app); err != nil {
		return nil, err
	}
	if len(sliceDeps) > 0 {
		uri, err := b.uploadReplicaRuntime(ctx)
		if err != nil {
			return nil, err
		}
		rayruntime.ShipModule(&app, uri)
	}
	if err := b.client.DeployServeConfig(ctx, &app); err != nil {
		return nil, err
	}
	return b.Status(ctx, p.Name)
}

// uploadServeEnv packages the local directories of the application's
// runtime_env and puts a runtime_env with their URIs in app's place.
func (b *Backend) uploadServeEnv(ctx context.Context, app *serveconfig.Application) error {
	env := app.RuntimeEnv
	if env == nil {
		return nil
	}
	local := env.WorkingDir != "" && !ray.IsURI(env.WorkingDir) || slices.ContainsFunc(env.PyModules, func(m string) bool { return !ray.IsURI(m) })
	if !local {
		return nil
	}
	prepared, err := b.client.PrepareRuntimeEnv(ctx, env, b.pkg)
	if err != nil {
		return err
	}
	prepared.Excludes = nil // applied while packaging
	app.RuntimeEnv = prepared
	return nil
}

// Wait follows the application until it is RUNNING, reporting each change
// of its or its deployments' status. DEPLOY_FAILED and UNHEALTHY are a
// *backend.ServiceError with Ray's message. An application still DEPLOYING
// after opts.StuckAfter (default backend.DefaultStuckAfter) is diagnosed
// from the cluster (see Diagnose) on every poll: once the diagnosis finds
// an error or a pending placement group, Wait returns a
// *backend.ServiceError whose Status carries the diagnosis and whose Err
// is a *backend.PlacementError (errors.Is backend.ErrPlacement). A
// placement that only waits for capacity (a pending or infeasible group, a
// slice head no node offers) is not stuck while the cluster's autoscaler
// reports nodes starting, nor for 30 s after (ray.Client.ClusterStatus;
// autoscaler v1, what KubeRay runs): an application whose slice scales
// from zero waits for it, and the backend's logger says which nodes it
// waits for. With no nodes starting, such a placement is stuck once two
// of the autoscaler's passes (10 s) saw it wait. A ctx that ends first is a *backend.ServiceError holding the
// last status.
//
// A RUNNING application is diagnosed once more: Serve calls a replica
// running once its constructor returned, even when the TPU bundles of its
// placement group landed on several slices and its first collective across
// them will hang. When that diagnosis finds an error, Wait returns the
// RUNNING status with the diagnosis and a *backend.ServiceError whose Err is
// a *backend.PlacementError, as the simulator's Wait does for the same
// placement. When the cluster's state cannot be read, the RUNNING status is
// returned without a diagnosis.
func (b *Backend) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	if err := b.usable("Wait"); err != nil {
		return nil, err
	}
	var on func(ray.ApplicationDetails)
	if opts.OnStatus != nil {
		on = func(a ray.ApplicationDetails) { opts.OnStatus(serviceStatus(a)) }
	}
	waitCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stuck := make(chan *backend.ServiceStatus, 1)
	if opts.StuckAfter >= 0 {
		after := opts.StuckAfter
		if after == 0 {
			after = backend.DefaultStuckAfter
		}
		go func() {
			if st := b.watchStuck(waitCtx, name, after); st != nil {
				stuck <- st
				stop(errStuck)
			}
		}()
	}
	a, err := b.client.WaitServeApplication(waitCtx, name, ray.WaitServeOptions{PollInterval: b.poll, OnTransition: on})
	if err != nil && ctx.Err() == nil && context.Cause(waitCtx) == errStuck {
		st := <-stuck
		return st, &backend.ServiceError{Status: st, Err: &backend.PlacementError{Backend: Name, Name: name, Diagnosis: st.Diagnosis}}
	}
	var se *ray.ServeApplicationError
	switch {
	case err == nil:
		return b.checkRunning(ctx, a)
	case errors.As(err, &se) && se.Status == ray.ServeAppNotStarted:
		return nil, fmt.Errorf("raybackend: %w: %w", backend.ErrNotFound, err)
	case errors.As(err, &se):
		st := &backend.ServiceStatus{Backend: Name, Name: name, Ran: true, State: backend.ServiceState(se.Status), Message: se.Message, Time: time.Now()}
		if se.Details != nil {
			st = serviceStatus(*se.Details)
			st.Message = se.Message
		}
		return st, &backend.ServiceError{Status: st, Err: se.Err}
	}
	return nil, err
}

// checkRunning diagnoses a RUNNING application (see Wait).
func (b *Backend) checkRunning(ctx context.Context, a ray.ApplicationDetails) (*backend.ServiceStatus, error) {
	st := serviceStatus(a)
	landings, diag, err := b.diagnose(ctx, a)
	if err != nil {
		return st, nil
	}
	st.Landings, st.Diagnosis = landings, diag
	if !diag.HasErrors() {
		return st, nil
	}
	return st, &backend.ServiceError{Status: st, Err: &backend.PlacementError{Backend: Name, Name: a.Name, Diagnosis: diag}}
}

// Status reads the application's status from Serve.
func (b *Backend) Status(ctx context.Context, name string) (*backend.ServiceStatus, error) {
	if err := b.usable("Status"); err != nil {
		return nil, err
	}
	d, err := b.client.ServeApplications(ctx)
	if err != nil {
		return nil, err
	}
	a, ok := d.Applications[name]
	if !ok {
		return nil, fmt.Errorf("raybackend: Serve application %q: %w", name, backend.ErrNotFound)
	}
	return serviceStatus(a), nil
}

// Delete removes the application and leaves every other one running (see
// ray.Client.DeleteServeApplication).
func (b *Backend) Delete(ctx context.Context, name string) error {
	if err := b.usable("Delete"); err != nil {
		return err
	}
	err := b.client.DeleteServeApplication(ctx, name)
	if errors.Is(err, ray.ErrNotFound) {
		return fmt.Errorf("raybackend: %w: %w", backend.ErrNotFound, err)
	}
	return err
}

// serviceStatus turns Serve's application details into the backend's
// status, deployments by name.
func serviceStatus(a ray.ApplicationDetails) *backend.ServiceStatus {
	st := &backend.ServiceStatus{Backend: Name, Name: a.Name, Ran: true, State: backend.ServiceState(a.Status), Message: a.Message, Time: time.Now()}
	for _, name := range slices.Sorted(maps.Keys(a.Deployments)) {
		d := a.Deployments[name]
		running := 0
		for _, r := range d.Replicas {
			if r.State == ray.ServeReplicaRunning {
				running++
			}
		}
		st.Deployments = append(st.Deployments, backend.DeploymentStatus{
			Name: name, Status: string(d.Status), Message: d.Message, Replicas: running, TargetReplicas: d.TargetNumReplicas,
		})
	}
	return st
}
