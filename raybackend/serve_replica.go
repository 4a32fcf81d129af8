package raybackend

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/raytpu/raytpu/internal/replica"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// sliceDeployments names the config's deployments that carry a slice
// reservation and checks them against the plan's slice groups: each
// group's deployment must carry a reservation of the runtime's format that
// places one bundle per host, and each reservation needs a group.
func sliceDeployments(p *placement.Plan, app *serveconfig.Application) (map[string]bool, error) {
	out := map[string]bool{}
	for _, d := range app.Deployments {
		r := d.Reservation
		if r == nil {
			continue
		}
		switch {
		case r.Version != replica.ReservationVersion:
			return nil, fmt.Errorf("raybackend: Deploy %q: %w: deployments[%s].user_config.%s.version is %d; the replica runtime reads version %d (compile the application with this raytpu)",
				p.Name, ray.ErrInvalid, d.Name, replica.ReservationKey, r.Version, replica.ReservationVersion)
		case r.NumHosts < 1 || r.NumBundles != r.NumHosts:
			return nil, fmt.Errorf("raybackend: Deploy %q: %w: deployments[%s]: the %s slice has %d bundles for %d hosts; the replica runtime runs one host worker per bundle, so each bundle must hold a whole host (TPU: %d)",
				p.Name, ray.ErrInvalid, d.Name, r.Topology, r.NumBundles, r.NumHosts, r.ChipsPerHost)
		}
		out[d.Name] = true
	}
	grouped := map[string]bool{}
	for _, g := range p.Slices {
		grouped[g.Part.Name] = g.Part.Role == placement.RoleReplica
	}
	for name := range out {
		if !grouped[name] {
			return nil, fmt.Errorf("raybackend: Deploy %q: %w: deployments[%s] carries user_config.%s but the plan has no replica slice group for it (compile the application with package serve)",
				p.Name, ray.ErrInvalid, name, replica.ReservationKey)
		}
	}
	for _, g := range p.Slices {
		if g.Part.Role != placement.RoleReplica || !out[g.Part.Name] {
			return nil, fmt.Errorf("raybackend: Deploy %q: %w: slice group of %s has no deployment carrying user_config.%s in the Serve config (deployments with a reservation: %v)",
				p.Name, ray.ErrInvalid, g.Part, replica.ReservationKey, slices.Sorted(maps.Keys(out)))
		}
	}
	return out, nil
}

// uploadReplicaRuntime uploads raytpu's replica runtime as a single-file
// py_module and returns its gcs:// URI. It is uploaded on its own, so no
// runtime_env exclude of the application can leave it out; its URI depends
// only on its content, so redeploying sends the same config.
func (b *Backend) uploadReplicaRuntime(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "raytpu-replica-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path, err := replica.WriteModule(dir)
	if err != nil {
		return "", err
	}
	env, err := b.client.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{PyModules: []string{path}}, ray.PackageOptions{})
	if err != nil {
		return "", fmt.Errorf("raybackend: uploading the replica runtime: %w", err)
	}
	return env.PyModules[0], nil
}

// withPyModule returns a copy of env (nil: an empty one) whose
// py_modules end with uri (unless there).
func withPyModule(env *runtimeenv.RuntimeEnv, uri string) *runtimeenv.RuntimeEnv {
	out := env.Clone()
	if out == nil {
		out = &runtimeenv.RuntimeEnv{}
	}
	if !slices.Contains(out.PyModules, uri) {
		out.PyModules = append(out.PyModules, uri)
	}
	return out
}

// shipReplicaRuntime adds the runtime's URI to the application's
// runtime_env.py_modules, and to the own py_modules of every slice
// deployment that sets them (Serve replaces, not merges, a deployment's
// py_modules over the application's). It replaces app's fields with
// copies and writes into nothing app shares.
func shipReplicaRuntime(app *serveconfig.Application, sliceDeps map[string]bool, uri string) {
	app.RuntimeEnv = withPyModule(app.RuntimeEnv, uri)
	app.Deployments = slices.Clone(app.Deployments)
	for i := range app.Deployments {
		d := &app.Deployments[i]
		if o := d.RayActorOptions; o == nil || !sliceDeps[d.Name] || o.RuntimeEnv == nil || len(o.RuntimeEnv.PyModules) == 0 {
			continue
		}
		opts := *d.RayActorOptions
		opts.RuntimeEnv = withPyModule(opts.RuntimeEnv, uri)
		d.RayActorOptions = &opts
	}
}
