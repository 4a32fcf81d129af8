package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/train"
)

// dataConfig is the trainer of one v4 2x2x2 slice (2 workers) on range
// datasets of rows, one per policy, batch rows per host.
func dataConfig(t *testing.T, name string, rows, batch int, ragged ...data.RaggedPolicy) config {
	cfg := testConfig(t, name)
	cfg.Rows, cfg.BatchSize, cfg.Ragged = rows, batch, ragged
	return cfg
}

func TestDatasetsCompileGolden(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.Name = "range-pad"
	cfg.Storage = "/tmp/raytpu-results"
	cfg.Rows, cfg.BatchSize, cfg.Ragged = 1000, 64, []data.RaggedPolicy{data.Pad{Value: padValue}}
	p, warnings, err := trainer(cfg, "/tmp/jaxtrain").CompileWithWarnings()
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none (1000 rows split evenly over 2 workers)", warnings)
	}
	b, err := p.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "range-pad.golden.json", b)

	// 1001 rows: the split drops one row silently, which is a warning.
	cfg.Rows = 1001
	if _, warnings, err = trainer(cfg, "/tmp/jaxtrain").CompileWithWarnings(); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "drops 1 of 1001 rows") || warnings[0].Code != data.CodeSplitDropsRows || warnings[0].Field == "" {
		t.Errorf("1001 rows: warnings %q, err %v; want one warning about the dropped row", warnings, err)
	}
}

func TestDatasetsErrorsUnderTrainer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		rows, size int
		ragged     data.RaggedPolicy
		allowRaise bool
		want       string // field of the one error; "" for none
	}{
		{"batch not divisible by a v4 host's 4 devices", 1000, 62, data.Drop{}, false, "trainer.datasets[drop].iter.batchSize"},
		{"raise certain to fail", 1002, 64, data.Raise{}, false, "trainer.datasets[raise].iter.ragged"},
		{"raise allowed", 1002, 64, data.Raise{}, true, ""},
		{"raise that completes", 1000, 64, data.Raise{}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := defaults()
			cfg.Rows, cfg.BatchSize, cfg.Ragged, cfg.AllowRaise = c.rows, c.size, []data.RaggedPolicy{c.ragged}, c.allowRaise
			_, err := trainer(cfg, "/tmp/jaxtrain").Compile()
			var got []string
			for _, e := range field.Errors(err) {
				got = append(got, e.Field)
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if !slices.Equal(got, []string{c.want}) {
				t.Errorf("errors at %v (%v), want one at %s", got, err, c.want)
			}
		})
	}
}

// hostBatch is one batch as a host saw it: its process-local rows and how
// many of them are padding.
type hostBatch struct {
	Rows int `json:"rows"`
	Pad  int `json:"pad"`
}

type batchReport struct {
	Rank         int                    `json:"rank"`
	LocalDevices int                    `json:"local_devices"`
	ProcessCount int                    `json:"process_count"`
	Batches      map[string][]hostBatch `json:"batches"`
}

// predicted expands data.Predict's model of one host into its batches,
// by dataset name.
func predicted(t *testing.T, cfg config) (map[string]*data.Prediction, map[string][]hostBatch) {
	t.Helper()
	prs, batches := map[string]*data.Prediction{}, map[string][]hostBatch{}
	for _, ds := range datasets(cfg).Datasets {
		pr, errs := data.Predict(field.NewPath("iter"), ds.Dataset, ds.Iter, data.Hosts{Workers: 2, Accelerator: cfg.Accelerator})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		prs[ds.Name] = pr
		for _, r := range pr.Groups[0].Batches.Runs {
			for range r.Batches {
				batches[ds.Name] = append(batches[ds.Name], hostBatch{Rows: r.Rows + r.Pad, Pad: r.Pad})
			}
		}
	}
	return prs, batches
}

func readBatchReports(t *testing.T, dir string) []batchReport {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "batches-*.json"))
	var out []batchReport
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r batchReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b batchReport) int { return a.Rank - b.Rank })
	return out
}

// Every ragged policy on the real cluster, one dataset each in one run (a
// trainer's start dominates the time): every host sees exactly the batches
// data.Predict predicted before launch. The loop then trains 12 steps, and
// the run is also the example's single-slice run: its steps, checkpoints
// and where its workers ran are checked as well.
func TestTrainOnOneSliceDatasetsMatchPrediction(t *testing.T) {
	t.Run("drop pad raise", func(t *testing.T) {
		// 1000 rows: 500 per host = 7 batches of 64 and 52 rows, which 4
		// devices share, so even Raise completes.
		cfg := dataConfig(t, "range-policies", 1000, 64, data.Drop{}, data.Pad{Value: padValue}, data.Raise{})
		cfg.Steps = 12
		prs, want := predicted(t, cfg)
		for name, pr := range prs {
			if pr.Fails {
				t.Fatalf("%s: prediction %+v fails; this case wants completing epochs", name, pr)
			}
		}
		res, err := runLogged(t, t.Context(), cfg)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		checkOneSliceRun(t, cfg, res)
		reports := readBatchReports(t, cfg.ReportDir)
		if len(reports) != 2 {
			t.Fatalf("%d batch reports, want one per host (2)", len(reports))
		}
		for _, r := range reports {
			if r.LocalDevices != hostDevices || r.ProcessCount != 2 {
				t.Errorf("rank %d: %d local devices, %d processes; want %d and 2", r.Rank, r.LocalDevices, r.ProcessCount, hostDevices)
			}
			if diff := cmp.Diff(want, r.Batches); diff != "" {
				t.Errorf("rank %d saw batches unlike the prediction (-predicted +seen):\n%s", r.Rank, diff)
			}
		}
	})
	t.Run("raise fails without retries", func(t *testing.T) {
		// 1002 rows: 501 per host, a last batch of 53 rows that 4 devices
		// cannot share. Compile refuses it; AllowRaise lets it run. With
		// MaxFailures 0 the first failing attempt ends the run.
		cfg := dataConfig(t, "range-raise-fails", 1002, 64, data.Raise{})
		cfg.AllowRaise = true
		cfg.MaxFailures = 0
		prs, _ := predicted(t, cfg)
		if pr := prs["raise"]; !pr.Fails || pr.Groups[0].Batches.Outcome != data.Raises {
			t.Fatalf("prediction %+v, want a Raise", pr)
		}
		res, err := runLogged(t, t.Context(), cfg)
		if res == nil || len(res.Attempts) != 1 {
			t.Errorf("result %+v; want the failed run's Result with its one worker-group start (no retry)", res)
		}
		var re *train.RunError
		if !errors.As(err, &re) || !errors.Is(err, train.ErrTrainingFailed) {
			t.Fatalf("err = %v, want a *train.RunError", err)
		}
		if re.Type == "" {
			t.Errorf("RunError without Ray's error type: %#v", re)
		}
		if !strings.Contains(re.Message, "ValueError") || !strings.Contains(re.Message, "The local batch size (53) must be evenly divisible") {
			t.Errorf("error %q, want Ray's ValueError about the last batch of 53 rows", re.Message)
		}
		if got := readBatchReports(t, cfg.ReportDir); len(got) != 0 {
			t.Errorf("%d hosts finished the epoch, want none", len(got))
		}
	})
}
