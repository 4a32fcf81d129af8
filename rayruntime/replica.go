package rayruntime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// ModuleName is the import name of the replica runtime, the Python
// package that makes a Ray Serve replica own one TPU slice: application
// code does `from raytpu_replica import tpu_slice`.
const ModuleName = "raytpu_replica"

// ReservationKey is the user_config key holding a replica's slice
// reservation (a serveconfig.SliceReservation), ReservationVersion the
// reservation format the runtime reads, and ProfilerKey the key of its
// profiler config (a serveconfig.ProfilerConfig). Package serveconfig
// defines them; package serve compiles them into a deployment.
const (
	ReservationKey     = serveconfig.SliceReservationKey
	ReservationVersion = serveconfig.SliceReservationVersion
	ProfilerKey        = serveconfig.ProfilerKey
)

// ProfilerPrefix starts the lines on which the launcher (one per train
// worker) and the replica runtime (one per TPU host) report where a JAX
// profiler server listens, followed by the report as JSON.
const ProfilerPrefix = "RAYTPU_PROFILER "

// SliceGroupPrefix starts the name of the slice placement group each
// slice replica reserves: SliceGroupName(app, deployment, replica).
const SliceGroupPrefix = "raytpu-slice"

// SliceGroupName is the name the replica runtime gives the slice
// placement group of replica (Serve's replica unique id) of deployment of
// application app: "raytpu-slice:<app>:<deployment>:<replica>".
func SliceGroupName(app, deployment, replica string) string {
	return SliceGroupPrefix + ":" + app + ":" + deployment + ":" + replica
}

// ModuleFiles returns the files of the replica runtime package, keyed by
// their paths under the directory listed in py_modules: ModuleName's
// __init__.py, the helpers it shares with the launcher and the protocol
// description.
func ModuleFiles() map[string][]byte {
	return map[string][]byte{
		ModuleName + "/__init__.py":     source(ModuleName + "/__init__.py"),
		ModuleName + "/_reservation.py": source(ModuleName + "/_reservation.py"),
		ModuleName + "/" + RuntimeFile:  source(RuntimeFile),
		ModuleName + "/" + ProtocolFile: Protocol(),
	}
}

// WriteModule writes the replica runtime package ([ModuleFiles]) into dir
// and returns the package directory, dir/raytpu_replica, ready to be
// listed in a runtime_env's py_modules (Ray uploads a directory entry
// under its own name, so the application imports it as ModuleName). An
// empty dir is an error, not the working directory: pass "." for that.
func WriteModule(dir string) (string, error) {
	if dir == "" {
		return "", errors.New(`rayruntime: WriteModule: empty directory: pass the directory to write into ("." for the working directory)`)
	}
	pkg := filepath.Join(dir, ModuleName)
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return "", fmt.Errorf("rayruntime: writing the replica runtime: %w", err)
	}
	for name, b := range ModuleFiles() {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), b, 0o644); err != nil {
			return "", fmt.Errorf("rayruntime: writing the replica runtime: %w", err)
		}
	}
	return pkg, nil
}

// ShipModule adds uri, the py_modules entry of the replica runtime as a
// backend shipped it (a package of WriteModule's directory), to the
// application's runtime_env.py_modules, and to the own py_modules of
// every deployment that carries a slice reservation and sets them (Serve
// replaces, not merges, a deployment's py_modules over the
// application's). It replaces app's fields with copies and writes into
// nothing app shares, so app may be a shallow copy of a compiled config.
// A nil app or an empty uri (nothing shipped) leaves everything as it is.
func ShipModule(app *serveconfig.Application, uri string) {
	if app == nil || uri == "" {
		return
	}
	app.RuntimeEnv = withPyModule(app.RuntimeEnv, uri)
	app.Deployments = slices.Clone(app.Deployments)
	for i := range app.Deployments {
		d := &app.Deployments[i]
		if o := d.RayActorOptions; o == nil || d.Reservation == nil || o.RuntimeEnv == nil || len(o.RuntimeEnv.PyModules) == 0 {
			continue
		}
		opts := *d.RayActorOptions
		opts.RuntimeEnv = withPyModule(opts.RuntimeEnv, uri)
		d.RayActorOptions = &opts
	}
}

// HasSliceDeployments reports whether a deployment of app carries a slice
// reservation, and so needs the replica runtime (ShipModule); false for a
// nil app.
func HasSliceDeployments(app *serveconfig.Application) bool {
	if app == nil {
		return false
	}
	return slices.ContainsFunc(app.Deployments, func(d serveconfig.Deployment) bool { return d.Reservation != nil })
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
