package raybackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
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
// A deployment with a topology is refused (backend.ErrUnsupported): its
// replicas reserve their slice through raytpu's replica runtime, which this
// backend does not ship yet. Plan it on the simulator, or deploy it without
// acceleratorConfig.topology.
func (b *Backend) Deploy(ctx context.Context, p *placement.Plan) (*backend.ServiceStatus, error) {
	if p == nil || p.Kind != placement.KindApplication || p.Serve == nil {
		return nil, fmt.Errorf("raybackend: Deploy: %w: want a plan of kind %s with a Serve application", backend.ErrUnsupported, placement.KindApplication)
	}
	if len(p.Slices) > 0 {
		g := p.Slices[0]
		return nil, fmt.Errorf("raybackend: Deploy %q: %w: %s needs a %s %s slice of its own, which raytpu's replica runtime reserves; the Ray backend does not ship that runtime yet (plan it on the simulator, or deploy without acceleratorConfig.topology)",
			p.Name, backend.ErrUnsupported, g.Part, g.Generation, g.Topology)
	}
	config, err := b.uploadServeEnv(ctx, p.Serve.Config)
	if err != nil {
		return nil, err
	}
	if err := b.client.DeployServeApplication(ctx, config); err != nil {
		return nil, err
	}
	return b.Status(ctx, p.Name)
}

// uploadServeEnv packages the local directories of the application's
// runtime_env and returns the config with their URIs.
func (b *Backend) uploadServeEnv(ctx context.Context, config json.RawMessage) (json.RawMessage, error) {
	var app map[string]json.RawMessage
	if err := json.Unmarshal(config, &app); err != nil {
		return nil, fmt.Errorf("raybackend: the plan's Serve config is not a JSON object: %w", err)
	}
	raw, ok := app["runtime_env"]
	if !ok {
		return config, nil
	}
	var env runtimeenv.RuntimeEnv
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("raybackend: the Serve config's runtime_env: %w", err)
	}
	local := env.WorkingDir != "" && !ray.IsURI(env.WorkingDir) || slices.ContainsFunc(env.PyModules, func(m string) bool { return !ray.IsURI(m) })
	if !local {
		return config, nil
	}
	prepared, err := b.client.PrepareRuntimeEnv(ctx, &env, b.pkg)
	if err != nil {
		return nil, err
	}
	prepared.Excludes = nil // applied while packaging
	if app["runtime_env"], err = json.Marshal(prepared); err != nil {
		return nil, err
	}
	return json.Marshal(app) // encoding/json sorts the keys: stable bytes
}

// Wait follows the application until it is RUNNING, reporting each change
// of its or its deployments' status. DEPLOY_FAILED and UNHEALTHY are a
// *backend.ServiceError with Ray's message; an application that stays
// DEPLOYING (a replica whose resources never come) is a
// *backend.ServiceError holding the last status when ctx ends.
func (b *Backend) Wait(ctx context.Context, name string, opts backend.WaitOptions) (*backend.ServiceStatus, error) {
	var on func(ray.ApplicationDetails)
	if opts.OnStatus != nil {
		on = func(a ray.ApplicationDetails) { opts.OnStatus(serviceStatus(a)) }
	}
	a, err := b.client.WaitServeApplication(ctx, name, ray.WaitServeOptions{PollInterval: b.poll, OnTransition: on})
	var se *ray.ServeApplicationError
	switch {
	case err == nil:
		return serviceStatus(a), nil
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

// Status reads the application's status from Serve.
func (b *Backend) Status(ctx context.Context, name string) (*backend.ServiceStatus, error) {
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
