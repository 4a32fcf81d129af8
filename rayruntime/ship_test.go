package rayruntime_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// ShipModule adds the runtime's URI where Serve reads py_modules
// and leaves the config it was given as it was: Deploy works on a copy of
// the plan's config, whose maps and pointers it shares.
func TestShipModuleLeavesThePlan(t *testing.T) {
	t.Parallel()
	const uri = "gcs://_ray_pkg_runtime.zip"
	plan := serveconfig.Application{
		Name: "a", ImportPath: "m:app",
		RuntimeEnv: &runtimeenv.RuntimeEnv{WorkingDir: "gcs://_ray_pkg_code.zip"},
		Deployments: []serveconfig.Deployment{
			{Name: "Router", RayActorOptions: &serveconfig.ActorOptions{RuntimeEnv: &runtimeenv.RuntimeEnv{PyModules: []string{"gcs://_ray_pkg_r.zip"}}}},
			{Name: "LLM", RayActorOptions: &serveconfig.ActorOptions{RuntimeEnv: &runtimeenv.RuntimeEnv{PyModules: []string{"gcs://_ray_pkg_l.zip"}}},
				Reservation: &serveconfig.SliceReservation{Version: 1, PodType: "v4-16", NumHosts: 2, NumBundles: 2}},
			{Name: "Plain", Reservation: &serveconfig.SliceReservation{Version: 1, PodType: "v4-16", NumHosts: 2, NumBundles: 2}},
		},
	}
	before, err := plan.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	app := plan
	rayruntime.ShipModule(&app, uri)

	if after, _ := plan.MarshalJSON(); string(after) != string(before) {
		t.Errorf("the plan's config changed:\n%s\n%s", before, after)
	}
	if got, want := app.RuntimeEnv.PyModules, []string{uri}; !slices.Equal(got, want) {
		t.Errorf("application py_modules %v, want %v", got, want)
	}
	if app.RuntimeEnv.WorkingDir != plan.RuntimeEnv.WorkingDir {
		t.Errorf("working_dir %q, want it kept", app.RuntimeEnv.WorkingDir)
	}
	got := map[string][]string{}
	for _, d := range app.Deployments {
		if d.RayActorOptions != nil {
			got[d.Name] = d.RayActorOptions.RuntimeEnv.PyModules
		}
	}
	want := map[string][]string{
		"Router": {"gcs://_ray_pkg_r.zip"},      // no slice: its own modules
		"LLM":    {"gcs://_ray_pkg_l.zip", uri}, // its own modules replace the app's: the runtime joins them
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployment py_modules (-want +got):\n%s", diff)
	}
	if app.Deployments[2].RayActorOptions != nil {
		t.Errorf("Plain got ray_actor_options %+v; it takes the application's py_modules", app.Deployments[2].RayActorOptions)
	}
}

// A nil app has no slice deployments and ShipModule leaves it alone; an
// empty URI ships nothing.
func TestShipModuleNilAndEmpty(t *testing.T) {
	t.Parallel()
	if rayruntime.HasSliceDeployments(nil) {
		t.Error("a nil app has slice deployments")
	}
	rayruntime.ShipModule(nil, "gcs://_ray_pkg_runtime.zip")
	var app serveconfig.Application
	rayruntime.ShipModule(&app, "")
	if app.RuntimeEnv != nil {
		t.Errorf("an empty URI was shipped: %+v", app.RuntimeEnv)
	}
}
