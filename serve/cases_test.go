package serve

import (
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// specCase is one application spec with what Compile must say about it.
type specCase struct {
	name string
	app  Application
	// want lists the errors Compile reports; nil for a valid spec.
	want []field.Ref
	// golden names the testdata file the plan of a valid spec is kept in.
	golden string
}

func ref(f string, t field.Type) field.Ref { return field.Ref{Field: f, Type: t} }

const (
	required     = field.TypeRequired
	invalid      = field.TypeInvalid
	notSupported = field.TypeNotSupported
	forbidden    = field.TypeForbidden
)

// d is a deployment named "d" with the options of f applied.
func d(f func(*Deployment)) Deployment {
	dep := Deployment{Name: "d"}
	f(&dep)
	return dep
}

// one is an application "a" with a single deployment.
func one(dep Deployment) Application {
	return Application{Name: "a", ImportPath: "app:app", Deployments: []Deployment{dep}}
}

var v4Slice = &AcceleratorConfig{Kind: TPU, Accelerator: "v4", Topology: "2x2x2"}

// specCases are the specs every test of the package runs: validation,
// golden plans, and the cross-check with Ray's own Serve schema.
var specCases = []specCase{
	// Valid specs.
	{name: "minimal", app: Application{ImportPath: "app:app"}, golden: "minimal"},
	{name: "route and replicas", app: Application{Name: "api", RoutePrefix: "/api", ImportPath: "svc.main:app",
		Deployments: []Deployment{{Name: "Model", NumReplicas: serveconfig.ReplicaCount(3)}}}},
	{name: "no route", app: Application{Name: "bg", NoRoute: true, ImportPath: "svc.worker"}},
	{name: "auto replicas", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.AutoReplicas() }))},
	{name: "auto with autoscaling", app: one(d(func(d *Deployment) {
		d.NumReplicas = serveconfig.AutoReplicas()
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(0), MaxReplicas: 4}
	}))},
	{name: "auto min above default max", app: one(d(func(d *Deployment) {
		d.NumReplicas = serveconfig.AutoReplicas()
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(5)}
	}))},
	{name: "autoscaling every field", app: one(d(func(d *Deployment) {
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{
			MinReplicas: new(1), InitialReplicas: new(2), MaxReplicas: 4, TargetOngoingRequests: 3,
			UpscaleDelayS: new(0.0), DownscaleDelayS: new(120.0), DownscaleToZeroDelayS: new(60.0),
			LookBackPeriodS: 20, UpscalingFactor: 1.5, DownscalingFactor: 0.5, AggregationFunction: "max",
		}
	})), golden: "autoscaling"},
	{name: "request limits and health", app: one(d(func(d *Deployment) {
		d.MaxOngoingRequests, d.MaxQueuedRequests = 8, serveconfig.MaxQueued(100)
		d.HealthCheckPeriodS, d.HealthCheckTimeoutS = 5, 15
		d.GracefulShutdownWaitLoopS, d.GracefulShutdownTimeoutS = new(0.0), new(60.0)
	}))},
	{name: "max queued no limit", app: one(d(func(d *Deployment) { d.MaxQueuedRequests = serveconfig.NoQueueLimit() }))},
	{name: "user config", app: one(d(func(d *Deployment) {
		d.UserConfig = map[string]any{"threshold": 0.5, "labels": []string{"a", "b"}, "nested": map[string]any{"z": 1, "a": true}}
	}))},
	{name: "actor options", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{
			NumCPUs: new(0.5), Memory: 2e9, Resources: map[string]float64{"TPU": 4, "custom": 0.25},
			AcceleratorType: "TPU-V6E",
			LabelSelector:   map[string]string{"ray.io/accelerator-type": "TPU-V6E", "zone": "in(us-a,us-b)", "spot": "!true"},
			RuntimeEnv:      runtimeenv.RuntimeEnv{EnvVars: map[string]string{"JAX_PLATFORMS": "tpu"}},
		}
	})), golden: "actor-options"},
	{name: "gpu actor", app: one(d(func(d *Deployment) { d.RayActorOptions = &RayActorOptions{NumGPUs: 1} }))},
	{name: "bundles strict pack", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1, "TPU": 4}, {"TPU": 4}}
		d.PlacementGroupStrategy = placement.StrictPack
	})), golden: "bundles"},
	{name: "bundles broadcast selector", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {"CPU": 1}}
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"ray.io/tpu-slice-name": "slice-a"}}
	}))},
	{name: "bundles selector per bundle", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {"CPU": 1}}
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"zone": "a"}, {"zone": "b"}}
	}))},
	{name: "tpu-only bundle", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"TPU": 4}}
		d.RayActorOptions = &RayActorOptions{NumCPUs: new(0.0)}
	}))},
	{name: "max replicas per node", app: one(d(func(d *Deployment) { d.MaxReplicasPerNode = 2 }))},
	{name: "app runtime env", app: Application{Name: "a", ImportPath: "app:app", RuntimeEnv: runtimeenv.RuntimeEnv{
		WorkingDir: "gs://bucket/app.zip", PyModules: []string{"local:///opt/mods/lib"}, Pip: []string{"jax[tpu]"},
		EnvVars: map[string]string{"B": "2", "A": "1"},
	}}},
	{name: "local working dir", app: Application{Name: "a", ImportPath: "app:app", RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "./svc"}}},
	{name: "builder args", app: Application{Name: "a", ImportPath: "app:build", Args: map[string]any{"model": "gemma", "tp": 4}}},
	{name: "accelerator without topology", app: one(d(func(d *Deployment) {
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v6e"}
		d.RayActorOptions = &RayActorOptions{Resources: map[string]float64{"TPU": 4}}
	}))},
	{name: "v4 slice per replica", app: one(d(func(d *Deployment) {
		d.NumReplicas = serveconfig.ReplicaCount(2)
		d.AcceleratorConfig = v4Slice
	})), golden: "v4-slices"},
	{name: "v6e slices autoscaling", app: one(d(func(d *Deployment) {
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(1), MaxReplicas: 3}
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "TPU-V6E", Topology: "4x4"}
		d.UserConfig = map[string]any{"max_tokens": 512}
	})), golden: "v6e-autoscaling"},
	{name: "single-host slice", app: one(d(func(d *Deployment) {
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v6e", Topology: "2x2"}
	}))},
	{name: "slice with worker bundles", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 2, "TPU": 4}, {"CPU": 2, "TPU": 4}}
		d.PlacementGroupStrategy = placement.Spread
		d.AcceleratorConfig = v4Slice
	}))},
	{name: "slice auto replicas", app: one(d(func(d *Deployment) {
		d.NumReplicas = serveconfig.AutoReplicas()
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: 2}
		d.AcceleratorConfig = v4Slice
	}))},
	{name: "two deployments", app: Application{Name: "chat", RoutePrefix: "/chat", ImportPath: "chat.app:build",
		Deployments: []Deployment{
			{Name: "Router", NumReplicas: serveconfig.ReplicaCount(2), RayActorOptions: &RayActorOptions{NumCPUs: new(0.5)}},
			{Name: "LLM", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: v4Slice, HealthCheckTimeoutS: 120},
		}}, golden: "two-deployments"},

	// Specs Ray rejects too.
	{name: "import path missing", app: Application{}, want: []field.Ref{ref("app.import_path", required)}},
	{name: "import path without dot", app: Application{ImportPath: "app"}, want: []field.Ref{ref("app.import_path", invalid)}},
	{name: "import path two colons", app: Application{ImportPath: "a:b:c"}, want: []field.Ref{ref("app.import_path", invalid)}},
	{name: "import path ends with dot", app: Application{ImportPath: "app."}, want: []field.Ref{ref("app.import_path", invalid)}},
	{name: "route without slash", app: Application{ImportPath: "a:b", RoutePrefix: "api"}, want: []field.Ref{ref("app.route_prefix", invalid)}},
	{name: "route trailing slash", app: Application{ImportPath: "a:b", RoutePrefix: "/api/"}, want: []field.Ref{ref("app.route_prefix", invalid)}},
	{name: "route wildcard", app: Application{ImportPath: "a:b", RoutePrefix: "/{id}"}, want: []field.Ref{ref("app.route_prefix", invalid)}},
	{name: "deployment without name", app: one(Deployment{NumReplicas: serveconfig.ReplicaCount(1)}), want: []field.Ref{ref("app.deployments[0].name", required)}},
	{name: "negative replicas", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.ReplicaCount(-3) })), want: []field.Ref{ref("app.deployments[d].num_replicas", invalid)}},
	{name: "replicas with autoscaling", app: one(d(func(d *Deployment) {
		d.NumReplicas = serveconfig.ReplicaCount(2)
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: 4}
	})), want: []field.Ref{ref("app.deployments[d].num_replicas", forbidden)}},
	{name: "min above default max", app: one(d(func(d *Deployment) { d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(3)} })),
		want: []field.Ref{ref("app.deployments[d].autoscaling_config.min_replicas", invalid)}},
	{name: "max below min", app: one(d(func(d *Deployment) {
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MinReplicas: new(3), MaxReplicas: 2}
	})),
		want: []field.Ref{ref("app.deployments[d].autoscaling_config.max_replicas", invalid)}},
	{name: "initial above max", app: one(d(func(d *Deployment) {
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{InitialReplicas: new(5), MaxReplicas: 4}
	})),
		want: []field.Ref{ref("app.deployments[d].autoscaling_config.initial_replicas", invalid)}},
	{name: "negative max replicas", app: one(d(func(d *Deployment) { d.AutoscalingConfig = &serveconfig.AutoscalingConfig{MaxReplicas: -1} })),
		want: []field.Ref{ref("app.deployments[d].autoscaling_config.max_replicas", invalid)}},
	{name: "autoscaling ranges", app: one(d(func(d *Deployment) {
		d.AutoscalingConfig = &serveconfig.AutoscalingConfig{TargetOngoingRequests: -1, UpscaleDelayS: new(-1.0), AggregationFunction: "median"}
	})), want: []field.Ref{
		ref("app.deployments[d].autoscaling_config.target_ongoing_requests", invalid),
		ref("app.deployments[d].autoscaling_config.upscale_delay_s", invalid),
		ref("app.deployments[d].autoscaling_config.aggregation_function", notSupported),
	}},
	{name: "request limits", app: one(d(func(d *Deployment) { d.MaxOngoingRequests, d.MaxQueuedRequests = -1, serveconfig.MaxQueued(-5) })),
		want: []field.Ref{ref("app.deployments[d].max_ongoing_requests", invalid), ref("app.deployments[d].max_queued_requests", invalid)}},
	{name: "health and shutdown", app: one(d(func(d *Deployment) {
		d.HealthCheckPeriodS = -1
		d.GracefulShutdownTimeoutS = new(-2.0)
	})), want: []field.Ref{ref("app.deployments[d].health_check_period_s", invalid), ref("app.deployments[d].graceful_shutdown_timeout_s", invalid)}},
	{name: "actor resources", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{NumCPUs: new(-1.0), Resources: map[string]float64{"CPU": 2, "TPU": 3}}
	})), want: []field.Ref{
		ref("app.deployments[d].ray_actor_options.num_cpus", invalid),
		ref("app.deployments[d].ray_actor_options.resources[CPU]", forbidden),
		ref("app.deployments[d].ray_actor_options.resources[TPU]", notSupported),
	}},
	{name: "bad label selector", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{LabelSelector: map[string]string{"bad key!": "x"}}
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.label_selector[bad key!]", invalid)}},
	{name: "bad label selector value", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{LabelSelector: map[string]string{"zone": "in(a,"}}
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.label_selector[zone]", invalid)}},
	{name: "label selector spaces", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{LabelSelector: map[string]string{"zone": "in(a,  b)", "pool": "in( a)"}}
	})), want: []field.Ref{
		ref("app.deployments[d].ray_actor_options.label_selector[pool]", invalid),
		ref("app.deployments[d].ray_actor_options.label_selector[zone]", invalid),
	}},
	// Ray 2.60 accepts the parentheses without "in" and one space after a
	// comma (what they mean is placement.LabelSelector's business).
	{name: "label selector forms Ray accepts", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{LabelSelector: map[string]string{"a": "(x,y)", "b": "!(x)", "c": "in(x, y)", "d": "", "e/f": "!in(x,y)"}}
	}))},
	{name: "bad bundle label selector", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {"CPU": 1}}
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"zone": "a"}, {"zone": "!!a"}}
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundle_label_selector[1][zone]", invalid)}},
	{name: "empty bundle", app: one(d(func(d *Deployment) { d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {}} })),
		want: []field.Ref{ref("app.deployments[d].placement_group_bundles[1]", invalid)}},
	{name: "zero bundle", app: one(d(func(d *Deployment) { d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {"GPU": 0}} })),
		want: []field.Ref{ref("app.deployments[d].placement_group_bundles[1]", invalid)}},
	{name: "unknown strategy", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}}
		d.PlacementGroupStrategy = "STRICT_PAK"
	})), want: []field.Ref{ref("app.deployments[d].placement_group_strategy", notSupported)}},
	{name: "strategy without bundles", app: one(d(func(d *Deployment) { d.PlacementGroupStrategy = placement.Spread })),
		want: []field.Ref{ref("app.deployments[d].placement_group_strategy", forbidden)}},
	{name: "selector without bundles", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"zone": "a"}}
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundle_label_selector", forbidden)}},
	{name: "selector count", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}, {"CPU": 1}, {"CPU": 1}}
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"zone": "a"}, {"zone": "b"}}
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundle_label_selector", invalid)}},
	{name: "max replicas per node with bundles", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1}}
		d.MaxReplicasPerNode = 2
	})), want: []field.Ref{ref("app.deployments[d].max_replicas_per_node", forbidden)}},
	{name: "max replicas per node range", app: one(d(func(d *Deployment) { d.MaxReplicasPerNode = 101 })),
		want: []field.Ref{ref("app.deployments[d].max_replicas_per_node", invalid)}},
	{name: "actor does not fit bundle 0", app: one(d(func(d *Deployment) { d.PlacementGroupBundles = []map[string]float64{{"TPU": 4}} })),
		want: []field.Ref{ref("app.deployments[d].ray_actor_options.num_cpus", invalid)}},
	{name: "actor resource does not fit bundle 0", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1, "TPU": 2}}
		d.RayActorOptions = &RayActorOptions{Resources: map[string]float64{"TPU": 4}}
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.resources[TPU]", invalid)}},
	{name: "unknown uri scheme", app: Application{ImportPath: "a:b", RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "ftp://host/app.zip"}},
		want: []field.Ref{ref("app.runtime_env.working_dir", notSupported)}},
	{name: "relative local uri", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{RuntimeEnv: runtimeenv.RuntimeEnv{PyModules: []string{"local://mods"}}}
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.runtime_env.py_modules[0]", invalid)}},

	// Specs raytpu rejects and Ray's schema accepts (see deliberateDifferences).
	{name: "duplicate deployment", app: Application{ImportPath: "a:b", Deployments: []Deployment{{Name: "x"}, {Name: "x"}}},
		want: []field.Ref{ref("app.deployments[1].name", invalid)}},
	{name: "reserved user config key", app: one(d(func(d *Deployment) { d.UserConfig = map[string]any{serveconfig.SliceReservationKey: 1} })),
		want: []field.Ref{ref("app.deployments[d].user_config[raytpu_slice]", forbidden)}},
	{name: "no route with prefix", app: Application{ImportPath: "a:b", NoRoute: true, RoutePrefix: "/x"},
		want: []field.Ref{ref("app.route_prefix", forbidden)}},
	{name: "topology without accelerator", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Topology: "2x2x2"} })),
		want: []field.Ref{ref("app.deployments[d].accelerator_config.accelerator_type", required)}},
	{name: "topology typo", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v6e", Topology: "4x5"} })),
		want: []field.Ref{ref("app.deployments[d].accelerator_config.topology", notSupported)}},
	{name: "topology gke only", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", Topology: "4x4x20"} })),
		want: []field.Ref{ref("app.deployments[d].accelerator_config.topology", notSupported)}},
	{name: "heterogeneous bundles with topology", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1, "TPU": 4}, {"TPU": 2}}
		d.AcceleratorConfig = v4Slice
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundles[1]", invalid)}},
	{name: "chips do not divide into bundles", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1, "TPU": 3}}
		d.AcceleratorConfig = v4Slice
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundles[0][TPU]", invalid)}},
	{name: "head timeout without topology", app: one(d(func(d *Deployment) {
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", HeadReservationTimeout: time.Second}
	})), want: []field.Ref{ref("app.deployments[d].accelerator_config.head_reservation_timeout_s", forbidden)}},
	{name: "gpu kind", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Kind: "gpu", Accelerator: "v4"} })),
		want: []field.Ref{ref("app.deployments[d].accelerator_config.kind", notSupported)}},
	{name: "unknown accelerator", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v9"} })),
		want: []field.Ref{ref("app.deployments[d].accelerator_config.accelerator_type", notSupported)}},
	{name: "accelerator type mismatch", app: one(d(func(d *Deployment) {
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v6e"}
		d.RayActorOptions = &RayActorOptions{AcceleratorType: "TPU-V4"}
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.accelerator_type", invalid)}},
	{name: "actor tpu with topology", app: one(d(func(d *Deployment) {
		d.RayActorOptions = &RayActorOptions{Resources: map[string]float64{"TPU": 4}}
		d.AcceleratorConfig = v4Slice
	})), want: []field.Ref{ref("app.deployments[d].ray_actor_options.resources[TPU]", forbidden)}},
	{name: "bundle selector with topology", app: one(d(func(d *Deployment) {
		d.PlacementGroupBundles = []map[string]float64{{"CPU": 1, "TPU": 4}}
		d.PlacementGroupBundleLabelSelector = []map[string]string{{"zone": "a"}}
		d.AcceleratorConfig = v4Slice
	})), want: []field.Ref{ref("app.deployments[d].placement_group_bundle_label_selector", forbidden)}},
}
