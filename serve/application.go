package serve

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve/internal/freeform"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
	"github.com/raytpu/raytpu/serveconfig"
)

// DefaultName is Serve's default application name.
const DefaultName = "default"

// Application mirrors one Ray Serve application of the declarative config
// (ServeApplicationSchema): the ingress to import and the options that
// override its deployments' code.
type Application struct {
	// Name of the application, unique in the Serve instance. Optional.
	// Default: "default".
	Name string `json:"name,omitempty"`
	// RoutePrefix is the HTTP path prefix of the ingress deployment: "/"
	// or "/path" without a trailing slash or wildcards. Optional. Default:
	// the ingress deployment's route prefix in code, else "/".
	RoutePrefix string `json:"route_prefix,omitempty"`
	// NoRoute sends route_prefix null: the application is reachable only
	// through deployment handles. Ray 2.60 gives such an application no
	// proxy endpoint at all, so Serve's gRPC proxy cannot reach it either
	// (NOT_FOUND, "Application '<name>' not found"). Optional. Default:
	// false.
	NoRoute bool `json:"no_route,omitempty"`
	// ImportPath names the ingress: a bound application or an application
	// builder, "module:attr" or "module.attr" (Ray's import_path). Required.
	ImportPath string `json:"import_path"`
	// RuntimeEnv of the application, merged under every deployment's.
	// working_dir and py_modules must be remote URIs, local:// directories,
	// or local directories a backend uploads first. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
	// Args are passed to the application builder ImportPath names; they
	// must marshal to JSON. Optional.
	Args map[string]any `json:"args,omitempty"`
	// Deployments override the options of the deployments in code, by
	// name. Optional.
	Deployments []Deployment `json:"deployments,omitempty"`
}

// Compile validates a and returns its plan: the Serve application config
// exactly as Ray's Serve REST API takes it (typed, serveconfig.Application),
// and one slice group per replica of every deployment with a topology.
// Problems come back together as a field.ErrorList with paths under "app"
// (app.deployments[llm].num_replicas), spelled as a Serve config file
// spells them. The plan belongs to the caller: it
// shares no map or slice with a, with another plan or with a later
// compile, so either may change afterwards without changing the other.
func (a Application) Compile() (*placement.Plan, error) {
	var errs field.ErrorList
	name := a.Name
	if name == "" {
		name = DefaultName
	}
	plan := &struct {
		placement.Plan
		serve placement.ServeApplication
	}{}
	out := &plan.serve.Config
	*out = serveconfig.Application{Name: name, ImportPath: a.ImportPath}
	if why := servecheck.Name(a.Name); why != "" {
		errs = append(errs, field.Invalid(appPath.Child("name"), a.Name, why))
	} else if len(a.Name) > placement.MaxNameLength {
		errs = append(errs, field.TooMany(appPath.Child("name"), len(a.Name), placement.MaxNameLength, placement.SourceNameLength))
	}
	if a.ImportPath == "" {
		errs = append(errs, field.Required(appPath.Child("import_path"), `the ingress to import, "module:app" or "module.app"`))
	} else if why := importPathRule(a.ImportPath); why != "" {
		errs = append(errs, field.Invalid(appPath.Child("import_path"), a.ImportPath, why))
	}
	switch {
	case a.NoRoute && a.RoutePrefix != "":
		errs = append(errs, field.Forbidden(appPath.Child("route_prefix"), "no_route is set: the application has no HTTP route"))
	case a.NoRoute:
		out.RoutePrefix = json.RawMessage("null")
	case a.RoutePrefix != "":
		if why := routePrefixRule(a.RoutePrefix); why != "" {
			errs = append(errs, field.Invalid(appPath.Child("route_prefix"), a.RoutePrefix, why))
		}
		out.RoutePrefix = strconv.AppendQuote(nil, a.RoutePrefix)
	}
	if !envEmpty(&a.RuntimeEnv) {
		errs = append(errs, servecheck.RuntimeEnv(appPath.Child("runtime_env"), &a.RuntimeEnv)...)
	}
	if a.Args != nil {
		errs = append(errs, freeform.Check(appPath.Child("args"), a.Args)...)
	}

	// Every deployment is checked before any replica's slice group is
	// built, so that a refused application builds none.
	cs := make([]compiled, len(a.Deployments))
	sliceReplicas := 0       // of the deployments above without an error
	var named map[string]int // only for many deployments; few are scanned
	if len(a.Deployments) > 16 {
		named = make(map[string]int, len(a.Deployments))
	}
	for i := range a.Deployments {
		d := &a.Deployments[i]
		var p *field.Path
		if d.Name == "" {
			p = deploymentsPath.Index(i)
		} else if first := a.firstNamed(named, d.Name, i); first < i {
			p = deploymentsPath.Index(i)
			errs = append(errs, field.Invalid(p.Child("name"), d.Name, fmt.Sprintf("duplicate deployment name; deployments[%d] has it", first)))
		} else {
			p = deploymentsPath.Key(d.Name)
		}
		cs[i] = d.compile(p, sliceReplicas)
		errs = append(errs, cs[i].errs...)
		sliceReplicas += cs[i].replicas
	}
	if len(errs) > 0 {
		return nil, errs
	}
	groups := make([]*placement.SliceGroup, 0, sliceReplicas)
	if len(a.Deployments) > 0 {
		out.Deployments = make([]serveconfig.Deployment, len(a.Deployments))
	}
	for i := range a.Deployments {
		d, c := &a.Deployments[i], &cs[i]
		var res *serveconfig.SliceReservation
		if c.shape != nil {
			var r serveconfig.SliceReservation
			var gerrs field.ErrorList
			if groups, r, gerrs = d.buildSlices(c.shape, c.replicas, groups); len(gerrs) > 0 {
				return nil, gerrs
			}
			res = &r
		}
		if err := d.rayConfig(&out.Deployments[i], c.accelType, res); err != nil {
			return nil, fmt.Errorf("serve: deployment %q: user_config: %w", d.Name, err)
		}
	}
	out.RuntimeEnv = envOrNil(&a.RuntimeEnv)
	var err error
	if out.Args, err = freeform.CopyMap(a.Args); err != nil {
		return nil, fmt.Errorf("serve: args: %w", err)
	}
	plan.Plan = placement.Plan{
		APIVersion: placement.APIVersion,
		Kind:       placement.KindApplication,
		Name:       name,
		Slices:     groups,
		Serve:      &plan.serve,
	}
	return &plan.Plan, nil
}

// The paths every Compile reports under; paths are immutable.
var (
	appPath         = field.NewPath("app")
	deploymentsPath = appPath.Child("deployments")
)

// firstNamed returns the index of the first deployment before i named
// name, or i when there is none. With named (name to first index, filled
// as it goes) it looks the name up instead of scanning.
func (a *Application) firstNamed(named map[string]int, name string, i int) int {
	if named != nil {
		if j, ok := named[name]; ok {
			return j
		}
		named[name] = i
		return i
	}
	for j := range a.Deployments[:i] {
		if a.Deployments[j].Name == name {
			return j
		}
	}
	return i
}

// compiled is one deployment's part of Compile: its errors, or what its
// replicas' slice groups are built from.
type compiled struct {
	errs      field.ErrorList
	accelType string
	// shape is the slice each replica owns (nil without a topology), and
	// replicas the number of replicas that own one.
	shape    *placement.Shape
	replicas int
}

// compile checks d, reporting its errors at p. before is the number of
// replicas that own a slice in the deployments above, for the
// application's limit.
func (d *Deployment) compile(p *field.Path, before int) compiled {
	var c compiled
	c.errs = d.validate(p)
	var aerrs field.ErrorList
	c.accelType, aerrs = d.validateAccelerator(p)
	c.errs = append(c.errs, aerrs...)
	c.errs = append(c.errs, d.validateProfiler(p)...)
	if d.hasTopology() && d.AcceleratorConfig.Accelerator != "" {
		shape, n, serrs := d.compileSlices(p, c.accelType, before)
		c.errs = append(c.errs, serrs...)
		if len(c.errs) == 0 {
			c.shape, c.replicas = shape, n
		}
	}
	return c
}
