package raybackend

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/replica"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// sliceReservation is the part of a deployment's user_config[raytpu_slice]
// that the backend checks before it ships the replica runtime.
type sliceReservation struct {
	Version      int    `json:"version"`
	Topology     string `json:"topology"`
	NumHosts     int    `json:"num_hosts"`
	NumBundles   int    `json:"num_bundles"`
	ChipsPerHost int    `json:"chips_per_host"`
}

// sliceDeployments reads the config's deployments that carry a slice
// reservation, by name, and checks them against the plan's slice groups:
// each group's deployment must carry a reservation of the runtime's format
// that places one bundle per host, and each reservation needs a group.
// Every disagreement is a field error of one refusal (see refuse).
func sliceDeployments(p *placement.Plan, app map[string]json.RawMessage) (map[string]bool, error) {
	config := field.NewPath("plan", "serve", "config")
	var deps []struct {
		Name       string                     `json:"name"`
		UserConfig map[string]json.RawMessage `json:"user_config"`
	}
	if raw, ok := app["deployments"]; ok {
		if err := json.Unmarshal(raw, &deps); err != nil {
			return nil, refuse(p, field.Invalid(config.Child("deployments"), string(raw), "must be a list of Serve deployments: "+err.Error()))
		}
	}
	var errs field.ErrorList
	out := map[string]bool{}
	carried := map[string]bool{} // with a reservation, valid or not
	for _, d := range deps {
		raw, ok := d.UserConfig[replica.ReservationKey]
		if !ok {
			continue
		}
		carried[d.Name] = true
		path := config.Child("deployments").Key(d.Name).Child("user_config", replica.ReservationKey)
		var r sliceReservation
		if err := json.Unmarshal(raw, &r); err != nil {
			errs = append(errs, field.Invalid(path, string(raw), "must be raytpu's slice reservation: "+err.Error()))
			continue
		}
		switch {
		case r.Version != replica.ReservationVersion:
			errs = append(errs, field.Invalid(path.Child("version"), r.Version,
				fmt.Sprintf("the replica runtime reads version %d (compile the application with this raytpu)", replica.ReservationVersion)))
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
				"a replica slice group for deployment %q, which carries user_config.%s (compile the application with package serve)", name, replica.ReservationKey)))
		}
	}
	for i, g := range p.Slices {
		if g.Part.Role != placement.RoleReplica || !carried[g.Part.Name] {
			errs = append(errs, field.Invalid(field.NewPath("plan", "slices").Index(i).Child("part"), g.Part.String(), fmt.Sprintf(
				"no deployment of the Serve config carries user_config.%s for this slice group (deployments that do: %v)", replica.ReservationKey, slices.Sorted(maps.Keys(carried)))))
		}
	}
	if len(errs) > 0 {
		return nil, refuse(p, errs...)
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

// addPyModule appends uri to a runtime_env's py_modules (unless there).
func addPyModule(raw json.RawMessage, uri string) (json.RawMessage, error) {
	var env runtimeenv.RuntimeEnv
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &env); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(env.PyModules, uri) {
		env.PyModules = append(env.PyModules, uri)
	}
	return json.Marshal(&env)
}

// shipReplicaRuntime adds the runtime's URI to the application's
// runtime_env.py_modules, and to the own py_modules of every slice
// deployment that sets them (Serve replaces, not merges, a deployment's
// py_modules over the application's).
func shipReplicaRuntime(app map[string]json.RawMessage, sliceDeps map[string]bool, uri string) error {
	env, err := addPyModule(app["runtime_env"], uri)
	if err != nil {
		return fmt.Errorf("raybackend: the Serve config's runtime_env: %w", err)
	}
	app["runtime_env"] = env
	raw, ok := app["deployments"]
	if !ok {
		return nil
	}
	var deps []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &deps); err != nil {
		return err
	}
	for _, d := range deps {
		var name string
		json.Unmarshal(d["name"], &name)
		opts := map[string]json.RawMessage{}
		if o, ok := d["ray_actor_options"]; !ok || !sliceDeps[name] || json.Unmarshal(o, &opts) != nil {
			continue
		}
		denv, ok := opts["runtime_env"]
		if !ok || !strings.Contains(string(denv), `"py_modules"`) {
			continue
		}
		if opts["runtime_env"], err = addPyModule(denv, uri); err != nil {
			return fmt.Errorf("raybackend: deployments[%s].ray_actor_options.runtime_env: %w", name, err)
		}
		if d["ray_actor_options"], err = json.Marshal(opts); err != nil {
			return err
		}
	}
	app["deployments"], err = json.Marshal(deps)
	return err
}
