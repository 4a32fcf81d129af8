package backendtest

import (
	"fmt"
	"strconv"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

// JobPlan is the suite's default plan of a kind that runs to completion: a
// Ray job whose entrypoint prints a line, holding one slice group of one
// v4 2x2x1 slice (one host of 4 chips, Ray's v4-8) as the workload's
// worker group. Nothing in the job uses the slice: a Ray cluster without
// TPU hosts runs it, and a backend that places slices (the simulator,
// KubeRay) needs one v4-8 host free. Every call returns a new plan.
func JobPlan(name string, kind placement.Kind) *placement.Plan {
	g, err := placement.SliceSpec{Accelerator: "v4", Topology: "2x2x1"}.Compile(nil)
	if err != nil { // a constant spec: cannot fail
		panic(fmt.Sprintf("backendtest: the v4 2x2x1 slice does not compile: %v", err))
	}
	g.Part = placement.Part{Role: placement.RoleWorkerGroup, Name: name}
	return &placement.Plan{
		APIVersion: placement.APIVersion, Kind: kind, Name: name,
		Slices: []*placement.SliceGroup{g},
		Job: &placement.Job{
			Entrypoint: `python -c "print('raytpu backendtest')"`,
			Metadata:   map[string]string{"raytpu.backendtest": name},
		},
	}
}

// AppPlan is the suite's default Serve application plan: one deployment
// of one replica with no slice, routed at "/"+name, importing
// backendtest:app. A backend that runs nothing (the simulator) deploys it;
// a real one needs an AppPlan of its own whose code it can import (see
// Backend.AppPlan). Every call returns a new plan.
func AppPlan(name string) *placement.Plan {
	return &placement.Plan{
		APIVersion: placement.APIVersion, Kind: placement.KindApplication, Name: name,
		Slices: []*placement.SliceGroup{},
		Serve: &placement.ServeApplication{Config: serveconfig.Application{
			Name:        name,
			RoutePrefix: strconv.AppendQuote(nil, "/"+name),
			ImportPath:  "backendtest:app",
			Deployments: []serveconfig.Deployment{{Name: "Echo", NumReplicas: serveconfig.ReplicaCount(1)}},
		}},
	}
}

// SlicePlan is the suite's default SlicePlacementGroup plan: one v4 2x2x1
// slice reserved by itself. Every call returns a new plan.
func SlicePlan(name string) *placement.Plan {
	g := JobPlan(name, placement.KindJaxTrainer).Slices[0]
	g.Part = placement.Part{}
	return placement.NewSlicePlan(name, g)
}

// planOf is a plan of kind k for b: b's own for the kinds it runs or
// serves, the suite's default otherwise.
func planOf(b *Backend, name string, k placement.Kind) *placement.Plan {
	switch {
	case k == placement.KindApplication && b.Server != nil:
		return b.AppPlan(name)
	case k == placement.KindApplication:
		return AppPlan(name)
	case k == placement.KindSlicePlacementGroup:
		return SlicePlan(name)
	case b.runs(k):
		return b.JobPlan(name, k)
	}
	return JobPlan(name, k)
}

// invalid is a plan that breaks one rule of the plan format, and the field
// error it must be refused with.
type invalid struct {
	what string
	plan *placement.Plan
	want field.Ref
}

// invalidPlans breaks valid, a plan of kind k, one rule at a time; every
// call of valid must return a new plan, named as asked.
func invalidPlans(k placement.Kind, valid func(name string) *placement.Plan, name func(tag string) string) []invalid {
	edit := func(tag string, f func(p *placement.Plan)) *placement.Plan {
		p := valid(name(tag))
		f(p)
		return p
	}
	ref := func(path string, t field.Type) field.Ref { return field.Ref{Field: path, Type: t} }
	cases := []invalid{
		{"a nil plan", nil, ref("plan", field.TypeRequired)},
		{"an unknown kind", edit("kind", func(p *placement.Plan) { p.Kind += "s" }), ref("plan.kind", field.TypeNotSupported)},
		{"no apiVersion", edit("version", func(p *placement.Plan) { p.APIVersion = "" }), ref("plan.apiVersion", field.TypeNotSupported)},
		{"no name", edit("noname", func(p *placement.Plan) { p.Name = "" }), ref("plan.name", field.TypeRequired)},
	}
	if k.RunsToCompletion() {
		idx := 0
		noGroups := edit("nogroups", func(p *placement.Plan) {
			idx = len(p.Slices)
			p.Slices = append(p.Slices[:idx:idx], &placement.SliceGroup{NumSlices: 1})
		})
		return append(cases,
			invalid{"no job", edit("nojob", func(p *placement.Plan) { p.Job = nil }), ref("plan.job", field.TypeRequired)},
			invalid{"a job with nothing to run", edit("noentry", func(p *placement.Plan) {
				job := *p.Job
				job.Entrypoint, job.Launcher, job.LauncherConfig = "", "", nil
				p.Job = &job
			}), ref("plan.job.entrypoint", field.TypeRequired)},
			invalid{"a slice group without placement groups", noGroups, ref(fmt.Sprintf("plan.slices[%d].groups", idx), field.TypeRequired)},
			invalid{"a Serve application in a job plan", edit("serve", func(p *placement.Plan) {
				p.Serve = AppPlan(p.Name).Serve
			}), ref("plan.serve", field.TypeForbidden)},
		)
	}
	return append(cases,
		invalid{"no Serve application", edit("noserve", func(p *placement.Plan) { p.Serve = nil }), ref("plan.serve", field.TypeRequired)},
		invalid{"a Serve config without an ingress", edit("noingress", func(p *placement.Plan) {
			p.Serve = &placement.ServeApplication{Config: serveconfig.Application{Name: p.Name}}
		}), ref("plan.serve.config.import_path", field.TypeRequired)},
		invalid{"a Serve config without a name", edit("noappname", func(p *placement.Plan) {
			p.Serve = &placement.ServeApplication{Config: serveconfig.Application{ImportPath: "backendtest:app"}}
		}), ref("plan.serve.config.name", field.TypeRequired)},
		invalid{"a job in a Serve plan", edit("job", func(p *placement.Plan) {
			p.Job = JobPlan(p.Name, placement.KindJaxTrainer).Job
		}), ref("plan.job", field.TypeForbidden)},
	)
}
