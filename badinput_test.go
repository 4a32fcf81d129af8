package raytpu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// TestBadInputGoEntryPoints feeds bad specs and files to every Go entry
// point a user calls: each returns an error naming the field at fault, as
// a field error a caller can match, and none panics.
func TestBadInputGoEntryPoints(t *testing.T) {
	t.Parallel()
	tpuScaling := train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "4x4"}
	llm := func(acc serve.AcceleratorConfig) serve.Application {
		return serve.Application{Name: "chat", ImportPath: "chat:app", Deployments: []serve.Deployment{{Name: "LLM", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: &acc}}}
	}
	decode := func(in string, root *field.Path, v any) func() error {
		return func() error { return fieldfile.Decode([]byte(in), root, v).Err() }
	}
	cases := []struct {
		name  string
		call  func() error
		field string // the path of an error the call must return
	}{
		// train.JaxTrainer.Compile
		{"trainer without a loop", func() error {
			_, err := train.JaxTrainer{ScalingConfig: tpuScaling}.Compile()
			return err
		}, "trainer.train_loop_per_worker"},
		{"trainer topology typo", func() error {
			s := tpuScaling
			s.Topology = "4x5"
			_, err := train.JaxTrainer{TrainLoopPerWorker: "m:f", ScalingConfig: s}.Compile()
			return err
		}, "trainer.scaling_config.topology"},
		{"trainer negative slices", func() error {
			s := tpuScaling
			s.NumSlices = -1
			_, err := train.JaxTrainer{TrainLoopPerWorker: "m:f", ScalingConfig: s}.Compile()
			return err
		}, "trainer.scaling_config.num_slices"},
		{"trainer too many slices", func() error {
			s := tpuScaling
			s.NumSlices = 1 << 40
			_, err := train.JaxTrainer{TrainLoopPerWorker: "m:f", ScalingConfig: s}.Compile()
			return err
		}, "trainer.scaling_config.num_slices"},
		{"trainer unknown generation", func() error {
			s := tpuScaling
			s.Accelerator = "v99"
			_, err := train.JaxTrainer{TrainLoopPerWorker: "m:f", ScalingConfig: s}.Compile()
			return err
		}, "trainer.scaling_config.accelerator_type"},
		// serve.Application.Compile
		{"application without an import path", func() error {
			_, err := serve.Application{Name: "chat"}.Compile()
			return err
		}, "app.import_path"},
		{"application topology typo", func() error {
			_, err := llm(serve.AcceleratorConfig{Accelerator: "v4", Topology: "4x5"}).Compile()
			return err
		}, "app.deployments[LLM].accelerator_config.topology"},
		{"application without an accelerator", func() error {
			_, err := llm(serve.AcceleratorConfig{Topology: "2x2x2"}).Compile()
			return err
		}, "app.deployments[LLM].accelerator_config"},
		{"application too many replicas", func() error {
			a := llm(serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"})
			a.Deployments[0].NumReplicas = serveconfig.ReplicaCount(1 << 30)
			_, err := a.Compile()
			return err
		}, "app.deployments[LLM].num_replicas"},
		{"application duplicate deployments", func() error {
			_, err := serve.Application{Name: "chat", ImportPath: "chat:app", Deployments: []serve.Deployment{{Name: "a"}, {Name: "a"}}}.Compile()
			return err
		}, "app.deployments"},
		// data compile
		{"pipeline without a name or a sink", func() error {
			_, err := data.Pipeline{Dataset: data.From(data.Range{N: 10})}.Compile()
			return err
		}, "pipeline.name"},
		{"pipeline negative range", func() error {
			_, err := data.Pipeline{Name: "p", Dataset: data.From(data.Range{N: -1}).Write(data.WriteJSON{Path: "/tmp/x"})}.Compile()
			return err
		}, "pipeline.dataset"},
		{"prediction with no workers", func() error {
			_, errs := data.Predict(field.NewPath("pipeline"), data.From(data.Range{N: 10}), data.IterJaxBatches{BatchSize: 2}, data.Hosts{})
			return errs.Err()
		}, "pipeline.workers"},
		{"prediction negative batch", func() error {
			_, errs := data.Predict(field.NewPath("pipeline"), data.From(data.Range{N: 10}), data.IterJaxBatches{BatchSize: -2}, data.Hosts{Workers: 1})
			return errs.Err()
		}, "pipeline.batchSize"},
		// placement.SliceSpec.Compile
		{"slice topology typo", func() error {
			_, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x5"}.Compile(nil)
			return err
		}, "topology"},
		{"slice without a topology", func() error {
			_, err := placement.SliceSpec{Accelerator: "v6e"}.Compile(field.NewPath("slice"))
			return err
		}, "slice.topology"},
		{"slice unknown strategy", func() error {
			_, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", Strategy: "PACKED"}.Compile(field.NewPath("slice"))
			return err
		}, "slice.strategy"},
		{"slice too many slices", func() error {
			_, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 1 << 40}.Compile(field.NewPath("slice"))
			return err
		}, "slice.numSlices"},
		// The loaders: cluster specs.
		{"cluster spec unknown pod type", func() error { _, err := sim.ParseSpec("v6e-17"); return err }, "spec[0].podType"},
		{"cluster spec file unknown key", func() error { _, err := sim.ParseSpecYAML([]byte("nodes:\n- podtype: cpu\n")); return err }, "nodes[0].podtype"},
		{"cluster spec file second document", func() error {
			_, err := sim.ParseSpecYAML([]byte("nodes: [{podType: cpu}]\n---\nnodes: []\n"))
			return err
		}, "file"},
		{"cluster spec file number topology", func() error {
			_, err := sim.ParseSpecYAML([]byte("nodes:\n- {podType: v6e-16, topology: 16}\n"))
			return err
		}, "nodes[0].topology"},
		// The loaders: Serve application files and compiled plans.
		{"application file unknown key", decode("name: a\ndeployments:\n- {name: b, num_replica: 2}\n", field.NewPath("app"), &serve.Application{}), "app.deployments[0].num_replica"},
		{"application file case", decode("Name: a\n", field.NewPath("app"), &serve.Application{}), "app.Name"},
		{"application file number topology", decode("deployments:\n- accelerator_config: {topology: 16}\n", field.NewPath("app"), &serve.Application{}), "app.deployments[0].accelerator_config.topology"},
		{"application file old timeout key", decode("deployments:\n- accelerator_config: {head_reservation_timeout: 30}\n", field.NewPath("app"), &serve.Application{}), "app.deployments[0].accelerator_config.head_reservation_timeout"},
		{"application file bad replicas", decode("deployments:\n- num_replicas: lots\n", field.NewPath("app"), &serve.Application{}), "app.deployments[0].num_replicas"},
		{"plan file unknown key", decode(`{"apiVersion": "raytpu.dev/v1alpha1", "slicez": []}`, nil, &placement.Plan{}), "slicez"},
		{"plan file wrong type", decode(`{"apiVersion": "raytpu.dev/v1alpha1", "slices": [{"numSlices": "2"}]}`, nil, &placement.Plan{}), "slices[0].numSlices"},
		{"plan file second document", decode("apiVersion: raytpu.dev/v1alpha1\n---\n", nil, &placement.Plan{}), "file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
						t.Errorf("panicked: %v", r)
					}
				}()
				err = c.call()
			}()
			if err == nil {
				t.Fatal("no error")
			}
			errs := field.Errors(err)
			if len(errs) == 0 {
				t.Fatalf("%v: not a field error", err)
			}
			found := false
			for _, e := range errs {
				found = found || e.Field == c.field || strings.HasPrefix(e.Field, c.field+".") || strings.HasPrefix(e.Field, c.field+"[")
			}
			if !found {
				t.Errorf("no error at %s: %v", c.field, err)
			}
		})
	}
}
