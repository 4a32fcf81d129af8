package main

import (
	"bytes"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/train"
)

// A misspelled train function is found in the local working directory
// before anything is uploaded: the error names the field and the function
// the module does define, and no job reaches the cluster.
func TestMisspelledTrainFunctionNeverReachesCluster(t *testing.T) {
	client, err := ray.NewClient(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	before, err := client.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, "misspelled")
	cfg.Adjust = func(t *train.JaxTrainer) { t.TrainLoopPerWorker = "train_loop:train_fucn" }
	_, err = run(t.Context(), cfg, &bytes.Buffer{})
	errs := field.Errors(err)
	if len(errs) != 1 || errs[0].Field != "trainer.train_loop_per_worker" || errs[0].Type != field.TypeNotSupported {
		t.Fatalf("err = %v, want one NotSupported at trainer.train_loop_per_worker", err)
	}
	if errs[0].Suggestion != "train_loop:train_func" {
		t.Errorf("suggestion = %q, want train_loop:train_func", errs[0].Suggestion)
	}
	after, err := client.ListJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("jobs on the cluster went from %d to %d; a misspelled train function must not be submitted", len(before), len(after))
	}
}
