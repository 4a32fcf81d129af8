package serve

import (
	"context"
	"errors"

	"github.com/raytpu/raytpu/backend"
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
// application is not running yet. opts, if given, tunes the wait.
func (a Application) Run(ctx context.Context, s backend.Server, opts ...backend.WaitOptions) (*backend.ServiceStatus, error) {
	return RunApp(ctx, s, a, opts...)
}

// Compiler is a Serve application that compiles to a plan of kind
// Application: an Application, or another front end's application built
// on Serve (package serve/llm's OpenAIApp).
type Compiler interface {
	Compile() (*placement.Plan, error)
}

// DeployApp compiles app and deploys its plan on s: Application.Deploy
// for any Compiler. Compile's errors come back before any request.
func DeployApp(ctx context.Context, s backend.Server, app Compiler) (*backend.ServiceStatus, error) {
	if s == nil {
		return nil, errors.New("serve: Deploy: nil backend")
	}
	plan, err := app.Compile()
	if err != nil {
		return nil, err
	}
	return s.Deploy(ctx, plan)
}

// RunApp deploys app on s and waits until it is RUNNING: Application.Run
// for any Compiler.
func RunApp(ctx context.Context, s backend.Server, app Compiler, opts ...backend.WaitOptions) (*backend.ServiceStatus, error) {
	st, err := DeployApp(ctx, s, app)
	if err != nil {
		return st, err
	}
	var o backend.WaitOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return s.Wait(ctx, st.Name, o)
}

// Delete mirrors serve.delete(name): it removes the named application from
// s and leaves every other one running.
func Delete(ctx context.Context, s backend.Server, name string) error {
	if s == nil {
		return errors.New("serve: Delete: nil backend")
	}
	return s.Delete(ctx, name)
}
