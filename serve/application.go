package serve

import (
	"fmt"
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
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
// exactly as Ray's Serve REST API takes it, and one slice group per replica
// of every deployment with a topology. Problems come back together as a
// field.ErrorList with paths under "app" (app.deployments[llm].numReplicas).
func (a Application) Compile() (*placement.Plan, error) {
	root := field.NewPath("app")
	var errs field.ErrorList
	name := a.Name
	if name == "" {
		name = DefaultName
	}
	out := rayApplication{Name: name, ImportPath: a.ImportPath, RuntimeEnv: envOrNil(&a.RuntimeEnv)}
	if a.ImportPath == "" {
		errs = append(errs, field.Required(root.Child("importPath"), `the ingress to import, "module:app" or "module.app"`))
	} else if why := importPathRule(a.ImportPath); why != "" {
		errs = append(errs, field.Invalid(root.Child("importPath"), a.ImportPath, why))
	}
	switch {
	case a.NoRoute && a.RoutePrefix != "":
		errs = append(errs, field.Forbidden(root.Child("routePrefix"), "noRoute is set: the application has no HTTP route"))
	case a.NoRoute:
		out.RoutePrefix = []byte("null")
	case a.RoutePrefix != "":
		if why := routePrefixRule(a.RoutePrefix); why != "" {
			errs = append(errs, field.Invalid(root.Child("routePrefix"), a.RoutePrefix, why))
		}
		out.RoutePrefix = []byte(strconv.Quote(a.RoutePrefix))
	}
	errs = append(errs, validateRuntimeEnv(root.Child("runtimeEnv"), &a.RuntimeEnv)...)
	if a.Args != nil {
		if _, err := marshal(a.Args); err != nil {
			errs = append(errs, field.Invalid(root.Child("args"), fmt.Sprintf("%T", a.Args), "must be JSON-serialisable: "+err.Error()))
		}
		out.Args = a.Args
	}

	groups := []*placement.SliceGroup{}
	seen := map[string]int{}
	for i := range a.Deployments {
		d := &a.Deployments[i]
		p := root.Child("deployments").Key(d.Name)
		if d.Name == "" {
			p = root.Child("deployments").Index(i)
		} else if first, dup := seen[d.Name]; dup {
			p = root.Child("deployments").Index(i)
			errs = append(errs, field.Invalid(p.Child("name"), d.Name, fmt.Sprintf("duplicate deployment name; deployments[%d] has it", first)))
		} else {
			seen[d.Name] = i
		}
		derrs := d.validate(p)
		accelType, aerrs := d.validateAccelerator(p)
		derrs = append(derrs, aerrs...)
		derrs = append(derrs, d.validateProfiler(p)...)
		var res *SliceReservation
		if d.hasTopology() && d.AcceleratorConfig.Accelerator != "" {
			reps, r, serrs := d.compileSlices(p)
			derrs = append(derrs, serrs...)
			if len(derrs) == 0 {
				groups, res = append(groups, reps...), r
			}
		}
		errs = append(errs, derrs...)
		if len(errs) == 0 {
			out.Deployments = append(out.Deployments, d.rayConfig(accelType, res))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	raw, err := marshal(out)
	if err != nil {
		return nil, fmt.Errorf("serve: encoding the application config: %w", err)
	}
	return &placement.Plan{
		APIVersion: placement.APIVersion,
		Kind:       placement.KindApplication,
		Name:       name,
		Slices:     groups,
		Serve:      &placement.ServeApplication{Config: raw},
	}, nil
}
