package backend_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

func refs(err error) []field.Ref {
	var out []field.Ref
	for _, e := range field.Errors(err) {
		out = append(out, field.Ref{Field: e.Field, Type: e.Type})
	}
	return out
}

func TestCheckPlanAcceptsValidPlans(t *testing.T) {
	t.Parallel()
	for _, k := range backend.RunKinds() {
		if err := backend.CheckPlan("b", backendtest.JobPlan("j", k), backend.RunKinds()...); err != nil {
			t.Errorf("a %s job plan: %v", k, err)
		}
	}
	cpuOnly := backendtest.JobPlan("cpu", placement.KindPipeline)
	cpuOnly.Slices = nil
	launcher := backendtest.JobPlan("train", placement.KindJaxTrainer)
	launcher.Job.Entrypoint, launcher.Job.Launcher = "", "train"
	for name, p := range map[string]*placement.Plan{"a pipeline without slices": cpuOnly, "a launcher without entrypoint": launcher} {
		if err := backend.CheckPlan("b", p, backend.RunKinds()...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := backend.CheckPlan("b", backendtest.AppPlan("chat"), placement.KindApplication); err != nil {
		t.Errorf("an application plan: %v", err)
	}
	renamed := backendtest.AppPlan("chat") // raytpu render --name chat-prod
	renamed.Name = "chat-prod"
	if err := backend.CheckPlan("b", renamed, placement.KindApplication); err != nil {
		t.Errorf("an application plan renamed: %v", err)
	}
	if err := backend.CheckPlan("b", backendtest.SlicePlan("reserve"), placement.KindSlicePlacementGroup); err != nil {
		t.Errorf("a slice plan: %v", err)
	}
}

func TestCheckPlanRefuses(t *testing.T) {
	t.Parallel()
	ref := func(f string, typ field.Type) field.Ref { return field.Ref{Field: f, Type: typ} }
	many := backendtest.JobPlan("", placement.KindJaxTrainer)
	many.APIVersion = "raytpu.dev/v2"
	many.Slices[0].NumSlices = 0
	many.Slices = append(many.Slices, nil)
	many.Serve = backendtest.AppPlan("x").Serve
	badSlice := backendtest.JobPlan("j", placement.KindPipeline)
	badSlice.Slices[0].Groups[0].Bundles[0].Slice = 1
	badSlice.Slices[0].Groups = append(badSlice.Slices[0].Groups, placement.Group{})
	unnamed := backendtest.AppPlan("chat")
	unnamed.Serve.Config = serveconfig.Application{ImportPath: "m:app"}
	noIngress := backendtest.AppPlan("chat")
	noIngress.Serve.Config = serveconfig.Application{Name: "chat"}
	empty := backendtest.AppPlan("chat")
	empty.Serve.Config = serveconfig.Application{}
	reserveNothing := backendtest.SlicePlan("r")
	reserveNothing.Slices = nil
	reserveNothing.Job = backendtest.JobPlan("r", placement.KindPipeline).Job
	unknown := backendtest.AppPlan("chat")
	unknown.Kind = "Aplication"
	cases := []struct {
		name string
		plan *placement.Plan
		runs []placement.Kind
		want []field.Ref
	}{
		{"nil", nil, backend.RunKinds(), []field.Ref{ref("plan", field.TypeRequired)}},
		{"an unknown kind, even one not run", unknown, backend.RunKinds(), []field.Ref{ref("plan.kind", field.TypeNotSupported)}},
		{"every problem at once", many, backend.RunKinds(), []field.Ref{
			ref("plan.apiVersion", field.TypeNotSupported), ref("plan.name", field.TypeRequired),
			ref("plan.slices[0].numSlices", field.TypeInvalid), ref("plan.slices[1]", field.TypeRequired),
			ref("plan.serve", field.TypeForbidden),
		}},
		{"bundles and groups", badSlice, backend.RunKinds(), []field.Ref{
			ref("plan.slices[0].groups", field.TypeInvalid),
			ref("plan.slices[0].groups[0].bundles[0].slice", field.TypeInvalid), ref("plan.slices[0].groups[1].bundles", field.TypeRequired),
		}},
		{"an application config without a name", unnamed, []placement.Kind{placement.KindApplication}, []field.Ref{ref("plan.serve.config.name", field.TypeRequired)}},
		{"an application config without an ingress", noIngress, []placement.Kind{placement.KindApplication}, []field.Ref{ref("plan.serve.config.import_path", field.TypeRequired)}},
		{"an empty application config", empty, []placement.Kind{placement.KindApplication}, []field.Ref{
			ref("plan.serve.config.name", field.TypeRequired), ref("plan.serve.config.import_path", field.TypeRequired),
		}},
		{"a slice plan that reserves nothing and runs a job", reserveNothing, []placement.Kind{placement.KindSlicePlacementGroup}, []field.Ref{
			ref("plan.slices", field.TypeRequired), ref("plan.job", field.TypeForbidden),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := backend.CheckPlan("mine", c.plan, c.runs...)
			var ipe *backend.InvalidPlanError
			if !errors.Is(err, backend.ErrInvalidPlan) || !errors.As(err, &ipe) || errors.Is(err, backend.ErrUnsupported) {
				t.Fatalf("CheckPlan = %v; want an *InvalidPlanError matching ErrInvalidPlan only", err)
			}
			if diff := cmp.Diff(c.want, refs(err)); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			if ipe.Backend != "mine" || !strings.HasPrefix(err.Error(), "mine: plan ") {
				t.Errorf("error %q of backend %q; want it to name the backend", err, ipe.Backend)
			}
		})
	}
}

// A plan of a kind the backend does not run is ErrUnsupported, whatever
// else is wrong with it: a backend says first what it does not do.
func TestCheckPlanUnsupportedFirst(t *testing.T) {
	t.Parallel()
	app := backendtest.AppPlan("chat")
	app.Name = ""
	err := backend.CheckPlan("mine", app, backend.RunKinds()...)
	if !errors.Is(err, backend.ErrUnsupported) || errors.Is(err, backend.ErrInvalidPlan) {
		t.Fatalf("CheckPlan(an application, run kinds) = %v; want ErrUnsupported only", err)
	}
	for _, want := range []string{"mine", string(placement.KindApplication), string(placement.KindJaxTrainer)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if err := backend.CheckPlan("mine", backendtest.JobPlan("j", placement.KindJaxTrainer)); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("CheckPlan with no kinds run = %v; want ErrUnsupported", err)
	}
}

func TestRunKinds(t *testing.T) {
	t.Parallel()
	kinds := backend.RunKinds()
	want := []placement.Kind{placement.KindJaxTrainer, placement.KindPipeline, placement.KindBatchInference}
	if !slices.Equal(kinds, want) {
		t.Errorf("RunKinds() = %v, want %v", kinds, want)
	}
	kinds[0] = placement.KindApplication
	if backend.RunKinds()[0] != placement.KindJaxTrainer {
		t.Error("RunKinds shares its slice between calls")
	}
}

// trainPlan is a two-slice v6e 4x4 JaxTrainer plan as train compiles it:
// a worker group of 8 bundles and a launcher config for 8 workers.
func trainPlan(t *testing.T) *placement.Plan {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2, Strategy: placement.Pack}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Part = placement.Part{Role: placement.RoleWorkerGroup, Name: "run"}
	return &placement.Plan{
		APIVersion: placement.APIVersion, Kind: placement.KindJaxTrainer, Name: "run",
		Slices: []*placement.SliceGroup{g},
		Job: &placement.Job{Launcher: "train", LauncherConfig: []byte(`{"train_loop_per_worker":"m:f","scaling_config":` +
			`{"num_workers":8,"use_tpu":true,"use_gpu":false,"accelerator_type":"TPU-V6E","topology":"4x4","placement_strategy":"PACK"}}`)},
	}
}

// A compiled plan is checked as a whole: numbers and names that disagree
// with its own source fields, or break the catalog's limits, are refused
// at their path (issue 46's edited plans).
func TestCheckPlanCrossChecksSliceGroups(t *testing.T) {
	t.Parallel()
	if err := backend.CheckPlan("b", trainPlan(t), backend.RunKinds()...); err != nil {
		t.Fatalf("the compiled train plan: %v", err)
	}
	inv := field.TypeInvalid
	at := func(f string, typ field.Type) field.Ref { return field.Ref{Field: "plan.slices[0]." + f, Type: typ} }
	for _, c := range []struct {
		name string
		edit func(p *placement.Plan)
		want []field.Ref
	}{
		{"numSlices 1000000000", func(p *placement.Plan) { p.Slices[0].NumSlices = 1000000000 },
			[]field.Ref{at("numSlices", field.TypeTooMany),
				at("megascale[0].numSlices", inv), at("megascale[1].numSlices", inv)}},
		{"topology 8x8 under podType v6e-16", func(p *placement.Plan) { p.Slices[0].Topology = "8x8" },
			[]field.Ref{at("podType", inv), at("hostsPerSlice", inv), at("bundlesPerSlice", inv),
				at("groups[0].bundles", inv), {Field: "plan.job.launcherConfig.scaling_config.topology", Type: inv}}},
		{"a deleted bundle", func(p *placement.Plan) { p.Slices[0].Groups[0].Bundles = p.Slices[0].Groups[0].Bundles[1:] },
			[]field.Ref{at("groups[0].bundles", inv), {Field: "plan.job.launcherConfig.scaling_config.num_workers", Type: inv}}},
		{"num_workers 3 against 8 bundles", func(p *placement.Plan) {
			p.Job.LauncherConfig = []byte(strings.Replace(string(p.Job.LauncherConfig), `"num_workers":8`, `"num_workers":3`, 1))
		}, []field.Ref{{Field: "plan.job.launcherConfig.scaling_config.num_workers", Type: inv}}},
		{"podType v4-16 on v6e", func(p *placement.Plan) { p.Slices[0].PodType = "v4-16" }, []field.Ref{at("podType", inv)}},
		{"hostsPerSlice -4", func(p *placement.Plan) { p.Slices[0].HostsPerSlice = -4 }, []field.Ref{at("hostsPerSlice", inv)}},
		{"v4 16x16x16, past Ray's table", func(p *placement.Plan) {
			p.Slices[0].Generation, p.Slices[0].Topology = "v4", "16x16x16"
		}, []field.Ref{at("topology", field.TypeNotSupported), {Field: "plan.job.launcherConfig.scaling_config.topology", Type: inv}}},
		{"an unknown generation", func(p *placement.Plan) { p.Slices[0].Generation = "v9" }, []field.Ref{at("generation", field.TypeNotSupported)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := trainPlan(t)
			c.edit(p)
			err := backend.CheckPlan("b", p, backend.RunKinds()...)
			if !errors.Is(err, backend.ErrInvalidPlan) {
				t.Fatalf("CheckPlan = %v, want ErrInvalidPlan", err)
			}
			if diff := cmp.Diff(c.want, refs(err)); diff != "" {
				t.Errorf("field errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}
