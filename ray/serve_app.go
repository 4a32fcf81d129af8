package ray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// Ray's Serve REST API has no call that deploys or deletes one
// application: PUT /api/serve/applications/ replaces the whole declarative
// set, and DELETE shuts all of Serve down. DeployServeApplication and
// DeleteServeApplication therefore read the set Ray reports, change one
// entry and write the whole set back.
//
// Ray offers no version or precondition to make that write conditional,
// so a writer outside this process that changes the set between the read
// and the write is overwritten. Within one process, calls on clients of
// the same dashboard URL are serialised.

// serveLocks maps a dashboard base URL to a one-slot semaphore that
// serialises the read-modify-write cycles of this process.
var serveLocks sync.Map // string -> chan struct{}

func (c *Client) lockServe(ctx context.Context) (unlock func(), err error) {
	v, _ := serveLocks.LoadOrStore(c.BaseURL(), make(chan struct{}, 1))
	sem := v.(chan struct{})
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serveAppHeader is the part of a ServeApplicationSchema this client reads.
type serveAppHeader struct {
	Name        *string        `json:"name"`
	RuntimeEnv  map[string]any `json:"runtime_env"`
	Deployments []struct {
		Name            string `json:"name"`
		RayActorOptions *struct {
			RuntimeEnv map[string]any `json:"runtime_env"`
		} `json:"ray_actor_options"`
	} `json:"deployments"`
}

// serveAppName returns the application's name: its "name" key, or Ray's
// default "default" when the key is absent.
func serveAppName(raw json.RawMessage) (string, error) {
	var h serveAppHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", fmt.Errorf("%w: decoding application: %v", ErrInvalid, err)
	}
	if h.Name == nil {
		return "default", nil
	}
	return *h.Name, nil
}

// checkServeApp validates what the client can judge in one application
// config: it is a JSON object, its name (when given) is not empty, and no
// runtime_env (the application's or a deployment's) names a local
// working_dir or py_modules path, which Ray 2.60's Serve config refuses.
// Everything else is left to Ray. field prefixes error paths.
func checkServeApp(field string, raw json.RawMessage) error {
	if err := checkAppObject(raw); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	var h serveAppHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("%s: %w: %v", field, ErrInvalid, err)
	}
	if h.Name != nil && *h.Name == "" {
		return fmt.Errorf("%s.name: %w: application names must be non-empty", field, ErrInvalid)
	}
	if err := checkRemoteEnv(field+".runtime_env", h.RuntimeEnv); err != nil {
		return err
	}
	for i, d := range h.Deployments {
		if d.RayActorOptions == nil {
			continue
		}
		f := fmt.Sprintf("%s.deployments[%d].ray_actor_options.runtime_env", field, i)
		if err := checkRemoteEnv(f, d.RayActorOptions.RuntimeEnv); err != nil {
			return err
		}
	}
	return nil
}

func checkRemoteEnv(field string, env map[string]any) error {
	if wd, ok := env["working_dir"].(string); ok && !isURI(wd) {
		return localPathError(field+".working_dir", wd)
	}
	if mods, ok := env["py_modules"].([]any); ok {
		for i, m := range mods {
			if s, ok := m.(string); ok && !isURI(s) {
				return localPathError(fmt.Sprintf("%s.py_modules[%d]", field, i), s)
			}
		}
	}
	return nil
}

// localPathError is the error for a local path p at field f of a Serve
// config's runtime_env.
func localPathError(f, p string) error {
	return fmt.Errorf("%s: %w: %q is a local path, and Ray's Serve config accepts only remote URIs "+
		"(gcs://, https://, s3://, ...) or local:// URIs here; upload it first with Client.PrepareRuntimeEnv "+
		"and put the gcs:// URI it returns in its place", f, ErrInvalid, p)
}

// keptApps returns the deployed configs of every application Ray holds a
// declarative config for, except skip and applications being deleted,
// sorted by name.
func keptApps(d ServeDetails, skip string) []json.RawMessage {
	names := make([]string, 0, len(d.Applications))
	for name, a := range d.Applications {
		if name != skip && a.Status != ServeAppDeleting && a.hasConfig() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	apps := make([]json.RawMessage, 0, len(names)+1)
	for _, name := range names {
		apps = append(apps, d.Applications[name].DeployedAppConfig)
	}
	return apps
}

// envelopeOf returns a config that keeps the running Serve's settings:
// its proxy location, HTTP and gRPC options (echoed so that Ray sees no
// attempt to change them) and target capacity (which a PUT without it
// would reset).
func envelopeOf(d ServeDetails, apps []json.RawMessage) ServeDeployConfig {
	cfg := ServeDeployConfig{Applications: apps}
	if d.Running() {
		cfg.ProxyLocation = d.ProxyLocation
		cfg.HTTPOptions = d.HTTPOptions
		cfg.GRPCOptions = d.GRPCOptions
		cfg.TargetCapacity = d.TargetCapacity
	}
	return cfg
}

// DeployServeApplication deploys one application, or updates the
// application of the same name, and keeps every other application as Ray
// reports it: it reads the status document, takes every other
// application's deployed_app_config verbatim, replaces or adds app, and
// PUTs the whole set with Serve's current proxy location, HTTP and gRPC
// options and target capacity. Applications deployed from Python are left
// alone by Ray; applications that failed to deploy stay in the set (and
// Ray retries them when their config makes it rebuild). When Serve is not
// running it starts with Ray's default options: to choose them, start it
// with DeployServeApplications.
//
// app is one ServeApplicationSchema object, sent byte for byte. A local
// working_dir or py_modules path is refused with ErrInvalid; upload it
// first with PrepareRuntimeEnv.
//
// A failed write is retried after reading the set again, never by sending
// the same body (see the note on concurrent writers above).
func (c *Client) DeployServeApplication(ctx context.Context, app json.RawMessage) error {
	if err := c.check("DeployServeApplication"); err != nil {
		return err
	}
	if err := checkServeApp("app", app); err != nil {
		return fmt.Errorf("ray: DeployServeApplication: %w", err)
	}
	name, err := serveAppName(app)
	if err != nil {
		return fmt.Errorf("ray: DeployServeApplication: app: %w", err)
	}
	return c.deployServeApp(ctx, "DeployServeApplication", name, app)
}

// DeployServeConfig is DeployServeApplication for a typed application
// config, such as a compiled plan's: the client reads its name and its
// runtime_envs from the fields, checks them as DeployServeApplication
// does, and sends the config's JSON (serveconfig.Application.MarshalJSON).
func (c *Client) DeployServeConfig(ctx context.Context, app *serveconfig.Application) error {
	if err := c.check("DeployServeConfig"); err != nil {
		return err
	}
	if app == nil {
		return fmt.Errorf("ray: DeployServeConfig: app: %w: no application", ErrInvalid)
	}
	if err := checkServeConfig("app", app); err != nil {
		return fmt.Errorf("ray: DeployServeConfig: %w", err)
	}
	raw, err := app.MarshalJSON()
	if err != nil {
		return fmt.Errorf("ray: DeployServeConfig: app: %w: %v", ErrInvalid, err)
	}
	return c.deployServeApp(ctx, "DeployServeConfig", app.Name, raw)
}

// checkServeConfig is checkServeApp for a typed config: a name that is
// not empty, and no local working_dir or py_modules path.
func checkServeConfig(field string, app *serveconfig.Application) error {
	if app.Name == "" {
		return fmt.Errorf("%s.name: %w: application names must be non-empty", field, ErrInvalid)
	}
	if err := checkRemoteRuntimeEnv(field+".runtime_env", app.RuntimeEnv); err != nil {
		return err
	}
	for i, d := range app.Deployments {
		if d.RayActorOptions != nil {
			f := fmt.Sprintf("%s.deployments[%d].ray_actor_options.runtime_env", field, i)
			if err := checkRemoteRuntimeEnv(f, d.RayActorOptions.RuntimeEnv); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRemoteRuntimeEnv is checkRemoteEnv for a typed runtime_env.
func checkRemoteRuntimeEnv(field string, env *runtimeenv.RuntimeEnv) error {
	if env == nil {
		return nil
	}
	if wd := env.WorkingDir; wd != "" && !isURI(wd) {
		return localPathError(field+".working_dir", wd)
	}
	for i, m := range env.PyModules {
		if !isURI(m) {
			return localPathError(fmt.Sprintf("%s.py_modules[%d]", field, i), m)
		}
	}
	return nil
}

// deployServeApp replaces or adds the application name with app, keeping
// every other one (see DeployServeApplication).
func (c *Client) deployServeApp(ctx context.Context, op, name string, app json.RawMessage) error {
	return c.rewriteServe(ctx, op, func(d ServeDetails, _ int) (*ServeDeployConfig, error) {
		apps := keptApps(d, name)
		apps = append(apps, app)
		cfg := envelopeOf(d, apps)
		return &cfg, nil
	})
}

// DeleteServeApplication removes one application and keeps every other
// one running: it PUTs the set Ray reports without it. When no other
// application is left (whatever its source), it shuts Serve down with
// DELETE /api/serve/applications/, since Ray's DELETE removes all of
// Serve. An unknown application is an error matching ErrNotFound; one
// already being deleted is not an error. An application deployed from
// Python cannot be removed through the REST API while others run (Ray's
// PUT leaves such applications alone): that is an error matching
// ErrConflict.
func (c *Client) DeleteServeApplication(ctx context.Context, name string) error {
	if err := c.check("DeleteServeApplication"); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("ray: DeleteServeApplication: name: %w: empty application name", ErrInvalid)
	}
	return c.rewriteServe(ctx, "DeleteServeApplication", func(d ServeDetails, attempt int) (*ServeDeployConfig, error) {
		a, ok := d.Applications[name]
		switch {
		case !ok && attempt > 1:
			return nil, nil // an earlier attempt's write landed
		case !ok:
			return nil, fmt.Errorf("ray: DeleteServeApplication: %w: no Serve application %q (applications: %v)",
				ErrNotFound, name, sortedKeys(d.Applications))
		case a.Status == ServeAppDeleting:
			return nil, nil
		}
		others := false
		for n, o := range d.Applications {
			others = others || (n != name && o.Status != ServeAppDeleting)
		}
		if !others {
			return &ServeDeployConfig{}, errShutdown
		}
		if !a.hasConfig() {
			return nil, fmt.Errorf("ray: DeleteServeApplication: %w: application %q was deployed from Python (source %q); "+
				"the REST API can remove it only by shutting down all of Serve (ShutdownServe)", ErrConflict, name, a.Source)
		}
		cfg := envelopeOf(d, keptApps(d, name))
		return &cfg, nil
	})
}

// errShutdown tells rewriteServe to shut Serve down instead of writing.
var errShutdown = errors.New("shut down Serve")

// rewriteServe runs read-modify-write cycles: it reads the status document,
// asks change for the config to write (nil: nothing to do; errShutdown:
// DELETE instead), and writes it once. A write that fails transiently is
// not resent: the next cycle reads the set again. attempt counts cycles
// from 1.
func (c *Client) rewriteServe(ctx context.Context, op string, change func(d ServeDetails, attempt int) (*ServeDeployConfig, error)) error {
	attempt := 0
	_, err := c.withRetry(ctx, c.retry.MaxAttempts, op+" after a failed write", func() error {
		attempt++
		writeFailed, err := c.rewriteServeOnce(ctx, op, attempt, change)
		if err != nil && !writeFailed {
			// A failed read has had its own retries; only a failed write
			// starts another cycle.
			return readFailed{err}
		}
		return err
	})
	if rf, ok := err.(readFailed); ok {
		return rf.err
	}
	return err
}

// readFailed carries a read's error through withRetry, which must not
// retry it: it hides the error from transient.
type readFailed struct{ err error }

func (r readFailed) Error() string { return r.err.Error() }

// rewriteServeOnce runs one cycle; writeFailed reports that err came from
// the PUT.
func (c *Client) rewriteServeOnce(ctx context.Context, op string, attempt int, change func(ServeDetails, int) (*ServeDeployConfig, error)) (writeFailed bool, err error) {
	unlock, err := c.lockServe(ctx)
	if err != nil {
		return false, fmt.Errorf("ray: %s: %w", op, err)
	}
	defer unlock()
	d, err := c.ServeApplications(ctx)
	if err != nil {
		return false, err
	}
	cfg, err := change(d, attempt)
	switch {
	case errors.Is(err, errShutdown):
		// DELETE is idempotent: ShutdownServe retries it itself.
		return false, c.ShutdownServe(ctx)
	case err != nil:
		return false, err
	case cfg == nil:
		return false, nil
	}
	body, err := cfg.MarshalJSON()
	if err != nil {
		return false, fmt.Errorf("ray: %s: %w", op, err)
	}
	_, err = c.once(ctx, request{method: http.MethodPut, path: servePath, body: body, ctype: "application/json", slow: true})
	return err != nil, serveError(err)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
