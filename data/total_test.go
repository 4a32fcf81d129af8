package data_test

import (
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
)

// data's exported functions and methods are total: nil receivers and nil,
// zero or negative inputs get an error or a plain answer, never a panic.
func TestTotalOverNilZeroNegative(t *testing.T) {
	t.Parallel()
	if (*data.RunError)(nil).Error() == "" {
		t.Error("a nil *RunError has no message")
	}
	var zero data.Dataset
	if zero.Steps() != 0 || zero.HasSink() {
		t.Error("the zero dataset has steps or a sink")
	}
	if _, ok := zero.KnownRows(); ok {
		t.Error("the zero dataset knows its rows")
	}
	if _, err := (data.Pipeline{}).Compile(); err == nil {
		t.Error("the zero pipeline compiled")
	}
	if _, err := (data.Pipeline{Name: "x", Dataset: data.From(nil)}).Compile(); err == nil {
		t.Error("a pipeline from a nil source compiled")
	}
	if _, err := (data.Pipeline{Name: "x", Dataset: data.From(data.Range{N: -1}).Write(nil)}).Compile(); err == nil {
		t.Error("a pipeline with a negative range and a nil sink compiled")
	}
	chained := data.From(data.Range{N: 10}).MapBatches(data.MapBatches{}).Filter(data.Filter{}).RandomShuffle(data.RandomShuffle{NumBlocks: -1}).Repartition(data.Repartition{NumBlocks: -1})
	if _, err := (data.Pipeline{Name: "x", Dataset: chained.Write(data.WriteJSON{})}).Compile(); err == nil {
		t.Error("zero and negative steps compiled")
	}
	if data.Describe(nil) == "" {
		t.Error("Describe(nil) is empty")
	}
	_ = data.MinLocalShuffleBuffer(-3) // arithmetic: no panic
	if _, err := data.ParquetRows(); err == nil {
		t.Error("ParquetRows(): no error")
	}
	for name, h := range map[string]data.Hosts{
		"zero":                {},
		"negative workers":    {Workers: -1},
		"negative devices":    {Workers: 1, LocalDevices: -1},
		"negative chips":      {Workers: 1, Accelerator: "v6e", ChipsPerHost: -4},
		"unknown accelerator": {Workers: 1, Accelerator: "v99"},
	} {
		for _, it := range []data.IterJaxBatches{{}, {BatchSize: -1, PrefetchBatches: -1, LocalShuffleBufferSize: -1, MaxDropFraction: -1}} {
			if _, errs := data.Predict(nil, data.From(data.Range{N: 10}), it, h); errs == nil && name != "zero" {
				t.Errorf("Predict with %s hosts and %+v: no error", name, it)
			}
		}
	}
	if _, errs := data.Predict(nil, data.Dataset{}, data.IterJaxBatches{}, data.Hosts{Workers: 1}); errs == nil {
		t.Error("Predict of the zero dataset: no error")
	}
	_, _ = (data.DatasetConfig{}).Compile(nil, data.Hosts{}) // no datasets: nothing to check, and no panic
	if _, _, errs := (data.DatasetConfig{Datasets: []data.TrainDataset{{}}}).CompileForTrainer(field.NewPath("datasets"), -1, "", -1); errs == nil {
		t.Error("CompileForTrainer with negative workers and chips: no error")
	}
}
