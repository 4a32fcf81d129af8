package raybackend

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// sliceDeployments names the config's deployments that carry a slice
// reservation and checks them against the plan's slice groups: each
// group's deployment must carry a reservation of the runtime's format that
// places one bundle per host, and each reservation needs a group. Every
// disagreement is a field error of one refusal (see refuse).
func sliceDeployments(p *placement.Plan, app *serveconfig.Application) (map[string]bool, error) {
	if app.ImportPath == rayvocab.ServeLLMOpenAIBuilder {
		// Serve LLM's replicas reserve their slices themselves when they
		// start: the plan's groups say what each will reserve, and no
		// deployment carries raytpu's reservation or needs its runtime.
		return nil, nil
	}
	config := field.NewPath("plan", "serve", "config")
	var errs field.ErrorList
	out := map[string]bool{}
	carried := map[string]bool{} // with a reservation, valid or not
	for _, d := range app.Deployments {
		r := d.Reservation
		if r == nil {
			continue
		}
		carried[d.Name] = true
		path := config.Child("deployments").Key(d.Name).Child("user_config", rayruntime.ReservationKey)
		switch {
		case r.Version != rayruntime.ReservationVersion:
			errs = append(errs, field.Invalid(path.Child("version"), r.Version,
				fmt.Sprintf("the replica runtime reads version %d (compile the application with this raytpu)", rayruntime.ReservationVersion)))
		case r.NumHosts < 1 || r.NumBundles != r.NumHosts:
			errs = append(errs, field.Invalid(path.Child("num_bundles"), r.NumBundles,
				fmt.Sprintf("the %s slice has %d hosts; the replica runtime runs one host worker per bundle, so each bundle must hold a whole host (TPU: %d)", r.Topology, r.NumHosts, r.ChipsPerHost)))
		default:
			out[d.Name] = true
		}
	}
	grouped := map[string]bool{}
	for _, g := range p.Slices {
		grouped[g.Part.Name] = g.Part.Role == placement.RoleReplica
	}
	for _, name := range slices.Sorted(maps.Keys(carried)) {
		if !grouped[name] {
			errs = append(errs, field.Required(field.NewPath("plan", "slices"), fmt.Sprintf(
				"a replica slice group for deployment %q, which carries user_config.%s (compile the application with package serve)", name, rayruntime.ReservationKey)))
		}
	}
	for i, g := range p.Slices {
		if g.Part.Role != placement.RoleReplica || !carried[g.Part.Name] {
			errs = append(errs, field.Invalid(field.NewPath("plan", "slices").Index(i).Child("part"), g.Part.String(), fmt.Sprintf(
				"no deployment of the Serve config carries user_config.%s for this slice group (deployments that do: %v)", rayruntime.ReservationKey, slices.Sorted(maps.Keys(carried)))))
		}
	}
	if len(errs) > 0 {
		return nil, refuse(p, errs...)
	}
	return out, nil
}

// uploadReplicaRuntime uploads raytpu's replica runtime (the package
// directory of rayruntime.WriteModule) as a py_module and returns its
// gcs:// URI. It is uploaded on its own, so no
// runtime_env exclude of the application can leave it out; its URI depends
// only on its content, so redeploying sends the same config.
func (b *Backend) uploadReplicaRuntime(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "raytpu-replica-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path, err := rayruntime.WriteModule(dir)
	if err != nil {
		return "", err
	}
	env, err := b.client.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{PyModules: []string{path}}, ray.PackageOptions{})
	if err != nil {
		return "", fmt.Errorf("raybackend: uploading the replica runtime: %w", err)
	}
	return env.PyModules[0], nil
}
