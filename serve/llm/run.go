package llm

import (
	"context"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/serve"
)

// Deploy compiles a and hands its plan to s, as `serve deploy` of the
// config file Compile yields would: a redeploy of the same application is
// declarative. Compile's errors come back before any request.
func (a OpenAIApp) Deploy(ctx context.Context, s backend.Server) (*backend.ServiceStatus, error) {
	return serve.DeployApp(ctx, s, a)
}

// Run mirrors serve.run(build_openai_app(...)): it deploys a on s and
// waits until the application is RUNNING (on the simulator: placed). A
// model whose slice cannot be reserved is reported as a generic
// deployment's is: a *backend.PlacementError on the simulator, whose
// diagnosis names the pending head reservation; on a live Ray cluster
// (raybackend) a *backend.ServiceError matching backend.ErrPlacement once
// the application has been DEPLOYING for opts' StuckAfter, whose
// diagnosis names the replica's TPU-<pod type>-head reservation, pending
// or offered by no node, read from the cluster's placement groups and
// nodes. opts tunes the wait; nil means the defaults.
func (a OpenAIApp) Run(ctx context.Context, s backend.Server, opts *backend.WaitOptions) (*backend.ServiceStatus, error) {
	return serve.RunApp(ctx, s, a, opts)
}
