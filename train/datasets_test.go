package train_test

import (
	"encoding/json"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/train"
)

// recordingSource is a DatasetSource that records what the trainer passes
// it and answers with fixed JSON, warnings or errors. The real
// implementation (data.DatasetConfig) is exercised with the trainer in
// examples/jaxtrain, since train may not import data.
type recordingSource struct {
	raw  string
	warn placement.Diagnosis
	errs field.ErrorList

	path         string
	workers      int
	accelerator  string
	chipsPerHost int
	calls        int
}

func (s *recordingSource) CompileForTrainer(p *field.Path, workers int, accelerator string, chips int) (json.RawMessage, placement.Diagnosis, field.ErrorList) {
	s.calls++
	s.path, s.workers, s.accelerator, s.chipsPerHost = p.String(), workers, accelerator, chips
	if len(s.errs) > 0 {
		return nil, nil, s.errs
	}
	return json.RawMessage(s.raw), s.warn, nil
}

func TestDatasetsHookGetsResolvedScaling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		scaling     train.ScalingConfig
		workers     int
		accelerator string
		chips       int
	}{
		{"v4 2x2x2", train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2"}, 2, "v4", 4},
		{"two v4 slices", train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}, 4, "v4", 4},
		{"v6e 2x4 by chips", train.ScalingConfig{UseTPU: true, Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 4}, 2, "v6e", 4},
		{"cpu", train.ScalingConfig{NumWorkers: 3}, 3, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := &recordingSource{raw: `{"datasets":{}}`, warn: placement.Diagnosis{{Severity: placement.SeverityWarning, Code: "X", Message: "x"}}}
			tr := base()
			tr.ScalingConfig = c.scaling
			tr.Datasets = src
			p, warn, err := tr.CompileWithWarnings()
			if err != nil {
				t.Fatal(err)
			}
			if src.calls != 1 || src.path != "trainer" || src.workers != c.workers || src.accelerator != c.accelerator || src.chipsPerHost != c.chips {
				t.Errorf("hook called %d times with (%s, %d, %q, %d), want once with (trainer, %d, %q, %d)",
					src.calls, src.path, src.workers, src.accelerator, src.chipsPerHost, c.workers, c.accelerator, c.chips)
			}
			if len(warn) != 1 || warn[0].String() != "warning X: x" {
				t.Errorf("warnings = %q, want the source's", warn)
			}
			var cfg rayruntime.TrainConfig
			if err := json.Unmarshal(p.Job.LauncherConfig, &cfg); err != nil {
				t.Fatal(err)
			}
			if string(cfg.Datasets) != src.raw {
				t.Errorf("launcher datasets = %s, want %s", cfg.Datasets, src.raw)
			}
		})
	}
}

func TestDatasetsErrorsJoinTheOthers(t *testing.T) {
	t.Parallel()
	src := &recordingSource{errs: field.ErrorList{field.Invalid(field.NewPath("trainer", "datasets").Index(0).Child("iter", "batchSize"), 63, "must divide by 4")}}
	tr := base()
	tr.TrainLoopPerWorker = "not a path"
	tr.Datasets = src
	_, err := tr.Compile()
	got := map[string]bool{}
	for _, e := range field.Errors(err) {
		got[e.Field] = true
	}
	for _, want := range []string{"trainer.train_loop_per_worker", "trainer.datasets[0].iter.batchSize"} {
		if !got[want] {
			t.Errorf("no error at %s in %v", want, err)
		}
	}

	// With an invalid scaling config the worker count is unknown: the
	// datasets are not compiled, and only the scaling error is reported.
	src = &recordingSource{raw: `{}`}
	tr = base()
	tr.ScalingConfig.Topology = "2x2x3"
	tr.Datasets = src
	if _, err := tr.Compile(); err == nil || src.calls != 0 {
		t.Errorf("invalid scaling: err = %v, hook calls = %d, want an error and no call", err, src.calls)
	}

	src = &recordingSource{raw: `[1]`}
	tr = base()
	tr.Datasets = src
	if _, err := tr.Compile(); len(field.Errors(err)) != 1 || field.Errors(err)[0].Field != "trainer.datasets" {
		t.Errorf("a non-object dataset JSON: err = %v, want one error at trainer.datasets", err)
	}
}
