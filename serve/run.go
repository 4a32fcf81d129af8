package serve

import (
	"context"
	"errors"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/nilness"
	"github.com/raytpu/raytpu/placement"
)

// Deploy compiles a and deploys it on s, as a PUT of its config (or
// serve.run(app, blocking=False)) does, and returns the status once the
// backend has accepted it. An invalid application is a field.ErrorList
// and reaches no backend. Deploying the same application again changes
// nothing; other applications on s keep running.
func (a Application) Deploy(ctx context.Context, s backend.Server) (*backend.ServiceStatus, error) {
	return DeployApp(ctx, s, a)
}

// Run mirrors serve.run(app): it deploys a on s and waits until the
// application is RUNNING (on the simulator: placed). A failed deployment
// is a *backend.ServiceError (errors.Is backend.ErrDeployFailed or
// backend.ErrUnhealthy, with Ray's message); a ctx that ends first is a
// *backend.ServiceError holding the last status, which says why the
// application is not running yet. opts tunes the wait; nil means the
// defaults.
func (a Application) Run(ctx context.Context, s backend.Server, opts *backend.WaitOptions) (*backend.ServiceStatus, error) {
	return RunApp(ctx, s, a, opts)
}

// Compiler is a Serve application that compiles to a plan of kind
// Application: an Application, or another front end's application built
// on Serve (package serve/llm's OpenAIApp).
type Compiler interface {
	Compile() (*placement.Plan, error)
}

// Errors of a call given nothing to work with.
var (
	errNilContext = errors.New("serve: nil context: pass context.Background() or a context with a deadline")
	errNilBackend = errors.New("serve: nil backend: pass a backend.Server (sim.New, raybackend.New, kuberay.New)")
	errNilApp     = errors.New("serve: nil application: pass a serve.Application or an llm.OpenAIApp")
)

// DeployApp compiles app and deploys its plan on s: Application.Deploy
// for any Compiler. Compile's errors come back before any request; a nil
// ctx, backend or app (also a typed nil) is an error, never a panic.
func DeployApp(ctx context.Context, s backend.Server, app Compiler) (*backend.ServiceStatus, error) {
	switch {
	case ctx == nil:
		return nil, errNilContext
	case nilness.Is(s):
		return nil, errNilBackend
	case nilness.Is(app):
		return nil, errNilApp
	}
	plan, err := app.Compile()
	if err != nil {
		return nil, err
	}
	return s.Deploy(ctx, plan)
}

// RunApp deploys app on s and waits until it is RUNNING: Application.Run
// for any Compiler. opts tunes the wait; nil means the defaults.
func RunApp(ctx context.Context, s backend.Server, app Compiler, opts *backend.WaitOptions) (*backend.ServiceStatus, error) {
	st, err := DeployApp(ctx, s, app)
	if err != nil {
		return st, err
	}
	var o backend.WaitOptions
	if opts != nil {
		o = *opts
	}
	return s.Wait(ctx, st.Name, o)
}

// Delete mirrors serve.delete(name): it removes the named application from
// s and leaves every other one running.
func Delete(ctx context.Context, s backend.Server, name string) error {
	switch {
	case ctx == nil:
		return errNilContext
	case nilness.Is(s):
		return errNilBackend
	case name == "":
		return errors.New(`serve: Delete: empty application name: pass the application's name ("default" when it set none)`)
	}
	return s.Delete(ctx, name)
}
