package backend

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

// InvalidPlanError is a plan a backend refused before doing anything: it
// breaks a rule of the plan format (see CheckPlan) or one the backend
// documents for the plans it runs. It matches ErrInvalidPlan, and every
// broken rule is a *field.Error that errors.As and field.Errors reach, with
// a path below "plan" (plan.job.entrypoint).
type InvalidPlanError struct {
	// Backend names the backend that refused the plan.
	Backend string
	// Name is the plan's name; empty for a nil plan.
	Name string
	// Errs lists every broken rule; never empty.
	Errs field.ErrorList
}

// Error names the backend, the plan and every broken rule; "<nil>" for a
// nil *InvalidPlanError.
func (e *InvalidPlanError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s: plan %q is invalid: %v", e.Backend, e.Name, e.Errs)
}

// Is reports ErrInvalidPlan.
func (e *InvalidPlanError) Is(target error) bool { return target == ErrInvalidPlan }

// Unwrap returns the field errors (nil when there are none, or e is nil).
func (e *InvalidPlanError) Unwrap() error {
	if e == nil || len(e.Errs) == 0 {
		return nil
	}
	return e.Errs
}

// CheckPlan is what a backend does first with a plan it is handed, before
// anything else; every backend of this module calls it, and a backend of
// your own should too. backendName is the backend's name (as in
// Outcome.Backend) and runs lists the kinds of plans the call runs (a
// Runner's Run: the kinds that run to completion; a Server's Deploy:
// placement.KindApplication).
//
// A nil plan and a plan of no known kind are an *InvalidPlanError. A plan
// of a known kind that is not in runs is an error matching ErrUnsupported,
// whatever else is wrong with it. Any other plan is checked against every
// rule of the plan format, and all the broken ones come back at once as an
// *InvalidPlanError:
//
//   - apiVersion is placement.APIVersion, kind one of placement.Kinds, name
//     is set;
//   - every slice group is what compiling its own source fields gives
//     (placement.SliceGroup.Validate): its generation and topology valid
//     under Ray's rules, its slice count within the limits, its pod type,
//     hosts and bundles per slice derived from them, as many bundles as
//     its slices hold, every bundle in one of its slices;
//   - its capacity is valid (placement.Capacity.Validate) and can give
//     its slices (placement.Capacity.ValidateSlices: flex-start has no
//     TPU v4);
//   - a JaxTrainer plan's launcher config asks for as many workers as its
//     worker group has bundles, on the group's topology;
//   - a plan that runs to completion has a job with an entrypoint or a
//     launcher, and no Serve application;
//   - an Application plan has a Serve application whose config names the
//     application (the plan's name, unless a tool renamed the plan) and
//     its ingress (import_path), and no job;
//   - a SlicePlacementGroup plan has at least one slice group, and neither
//     a job nor a Serve application.
func CheckPlan(backendName string, p *placement.Plan, runs ...placement.Kind) error {
	root := field.NewPath("plan")
	if p == nil {
		return &InvalidPlanError{Backend: backendName, Errs: field.ErrorList{field.Required(root, "a compiled plan")}}
	}
	errs := checkKind(root, p.Kind)
	if len(errs) == 0 && !slices.Contains(runs, p.Kind) {
		return fmt.Errorf("%s: %w: plan %q is of kind %s; this call takes %s", backendName, ErrUnsupported, p.Name, p.Kind, kindList(runs))
	}
	if p.APIVersion != placement.APIVersion {
		errs = append(errs, field.NotSupported(root.Child("apiVersion"), p.APIVersion, []string{placement.APIVersion}))
	}
	if p.Name == "" {
		errs = append(errs, field.Required(root.Child("name"), "the workload's name"))
	}
	for i, g := range p.Slices {
		errs = append(errs, g.Validate(root.Child("slices").Index(i))...)
	}
	errs = append(errs, p.Capacity.Validate(root.Child("capacity"))...)
	errs = append(errs, p.Capacity.ValidateSlices(root.Child("slices"), p.Slices)...)
	errs = append(errs, checkPayload(root, p)...)
	errs = append(errs, checkTrainWorkers(root, p)...)
	if len(errs) > 0 {
		return &InvalidPlanError{Backend: backendName, Name: p.Name, Errs: errs}
	}
	return nil
}

func checkKind(root *field.Path, k placement.Kind) field.ErrorList {
	var valid []string
	for _, v := range placement.Kinds() {
		valid = append(valid, string(v))
	}
	switch {
	case k == "":
		return field.ErrorList{field.Required(root.Child("kind"), "one of "+strings.Join(valid, ", "))}
	case !slices.Contains(placement.Kinds(), k):
		return field.ErrorList{field.NotSupported(root.Child("kind"), string(k), valid)}
	}
	return nil
}

func kindList(kinds []placement.Kind) string {
	if len(kinds) == 0 {
		return "no plan"
	}
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// trainLauncher is the launcher entry of a JaxTrainer plan's job
// (rayruntime.EntryTrain), and trainScaling the part of its launcher
// config (rayruntime.TrainConfig) that must agree with the worker group.
const trainLauncher = "train"

type trainScaling struct {
	Scaling *struct {
		NumWorkers      int    `json:"num_workers"`
		UseTPU          bool   `json:"use_tpu"`
		Topology        string `json:"topology"`
		AcceleratorType string `json:"accelerator_type"`
	} `json:"scaling_config"`
}

// checkTrainWorkers cross-checks a JaxTrainer plan's launcher config with
// its worker group: Ray Train starts num_workers workers, one per bundle
// of the group, on the group's topology and accelerator type.
func checkTrainWorkers(root *field.Path, p *placement.Plan) field.ErrorList {
	if p.Kind != placement.KindJaxTrainer || p.Job == nil || p.Job.Launcher != trainLauncher || len(p.Job.LauncherConfig) == 0 {
		return nil
	}
	cfg := root.Child("job", "launcherConfig")
	var tc trainScaling
	if err := json.Unmarshal(p.Job.LauncherConfig, &tc); err != nil {
		return field.ErrorList{field.Invalid(cfg, nil, "must be the train launcher's JSON object: "+err.Error())}
	}
	if tc.Scaling == nil {
		return field.ErrorList{field.Required(cfg.Child("scaling_config"), "the worker group's scaling config")}
	}
	sc := cfg.Child("scaling_config")
	var group *placement.SliceGroup
	for _, g := range p.Slices {
		if g != nil && g.Part.Role == placement.RoleWorkerGroup {
			group = g
			break
		}
	}
	var errs field.ErrorList
	if tc.Scaling.NumWorkers < 1 {
		errs = append(errs, field.Invalid(sc.Child("num_workers"), tc.Scaling.NumWorkers, "must be at least 1"))
	}
	if group == nil {
		return errs // CPU workers, or one TPU worker: no slice group
	}
	bundles := 0
	for _, grp := range group.Groups {
		bundles += len(grp.Bundles)
	}
	if tc.Scaling.NumWorkers >= 1 && tc.Scaling.NumWorkers != bundles {
		errs = append(errs, field.Invalid(sc.Child("num_workers"), tc.Scaling.NumWorkers,
			fmt.Sprintf("the worker group has %d bundles, one per worker", bundles)))
	}
	if tc.Scaling.Topology != group.Topology {
		errs = append(errs, field.Invalid(sc.Child("topology"), tc.Scaling.Topology, fmt.Sprintf("the worker group's slices are %s", group.Topology)))
	}
	if tc.Scaling.AcceleratorType != group.AcceleratorType {
		errs = append(errs, field.Invalid(sc.Child("accelerator_type"), tc.Scaling.AcceleratorType, fmt.Sprintf("the worker group's slices are %s", group.AcceleratorType)))
	}
	return errs
}

// checkPayload checks what the plan runs against its kind.
func checkPayload(root *field.Path, p *placement.Plan) field.ErrorList {
	var errs field.ErrorList
	job, serve := root.Child("job"), root.Child("serve")
	switch {
	case p.Kind.RunsToCompletion():
		if p.Job == nil {
			errs = append(errs, field.Required(job, "a plan of kind "+string(p.Kind)+" runs a Ray job"))
		} else if strings.TrimSpace(p.Job.Entrypoint) == "" && p.Job.Launcher == "" {
			errs = append(errs, field.Required(job.Child("entrypoint"), "a command to run, or a launcher (job.launcher)"))
		}
		if p.Serve != nil {
			errs = append(errs, field.Forbidden(serve, "only a plan of kind "+string(placement.KindApplication)+" deploys a Serve application"))
		}
	case p.Kind == placement.KindApplication:
		if p.Serve == nil {
			errs = append(errs, field.Required(serve, "a plan of kind "+string(placement.KindApplication)+" deploys a Serve application"))
		} else {
			errs = append(errs, checkServeConfig(serve.Child("config"), &p.Serve.Config, p.Name)...)
		}
		if p.Job != nil {
			errs = append(errs, field.Forbidden(job, "a Serve application runs no job"))
		}
	case p.Kind == placement.KindSlicePlacementGroup:
		if len(p.Slices) == 0 {
			errs = append(errs, field.Required(root.Child("slices"), "a plan of kind "+string(p.Kind)+" reserves at least one slice group"))
		}
		if p.Job != nil {
			errs = append(errs, field.Forbidden(job, "a plan of kind "+string(p.Kind)+" reserves slices and runs nothing"))
		}
		if p.Serve != nil {
			errs = append(errs, field.Forbidden(serve, "a plan of kind "+string(p.Kind)+" reserves slices and runs nothing"))
		}
	}
	return errs
}

func checkServeConfig(path *field.Path, app *serveconfig.Application, name string) field.ErrorList {
	var errs field.ErrorList
	if app.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), fmt.Sprintf("the application's name (the plan's is %q)", name)))
	}
	if app.ImportPath == "" {
		errs = append(errs, field.Required(path.Child("import_path"), `the ingress to import, "module:app" or "module.app"`))
	}
	return errs
}

// RunKinds lists the kinds of plans that run to completion
// (placement.Kind.RunsToCompletion): the kinds a Runner runs, and passes
// to CheckPlan. Each call returns a new slice.
func RunKinds() []placement.Kind {
	return slices.DeleteFunc(placement.Kinds(), func(k placement.Kind) bool { return !k.RunsToCompletion() })
}
