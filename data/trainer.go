package data

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// TrainDataset is one dataset a JaxTrainer passes to its workers
// (JaxTrainer(datasets={Name: ...})) and how the train loop iterates its
// shard (ray.train.get_dataset_shard(Name).iter_jax_batches(...)).
type TrainDataset struct {
	// Name is the key in datasets and get_dataset_shard. Required.
	Name string
	// Dataset is read and transformed; it must have no sink.
	Dataset Dataset
	// Iter are the iter_jax_batches options the train loop uses.
	Iter IterJaxBatches
}

// DatasetConfig is the data side of a JaxTrainer: its datasets and Ray
// Train's DataConfig.
type DatasetConfig struct {
	// Datasets, in order; names must be unique.
	Datasets []TrainDataset
	// DatasetsToSplit names the datasets split over the workers
	// (DataConfig.datasets_to_split). Optional. Default: all of them.
	DatasetsToSplit []string
}

// TrainerDatasets is a compiled DatasetConfig.
type TrainerDatasets struct {
	// Launcher is what the trainer's launcher configuration carries: the
	// launcher builds datasets= and dataset_config= for JaxTrainer from
	// it, and hands IterJaxBatches[name] to the train loop as
	// iter_jax_batches' keyword arguments.
	Launcher rayruntime.TrainDatasets
	// Predictions by dataset name, in the order of Datasets.
	Predictions []NamedPrediction
	// Findings of every prediction (warnings and notes), in order.
	Findings []placement.Finding
}

// NamedPrediction is the prediction of one dataset.
type NamedPrediction struct {
	Name string
	*Prediction
}

// Compile validates c for the given hosts and predicts every dataset's
// first epoch. Below p, a dataset's paths are keyed by its name, as Ray's
// datasets dict is (datasets[train].dataset.…, datasets[train].iter.…),
// or by its index where the name is missing or taken twice
// (datasets[1].name); DatasetsToSplit is dataset_config.datasets_to_split[i].
func (c DatasetConfig) Compile(p *field.Path, hosts Hosts) (*TrainerDatasets, field.ErrorList) {
	var errs field.ErrorList
	out := &TrainerDatasets{Launcher: rayruntime.TrainDatasets{
		Datasets: map[string]rayruntime.Dataset{}, IterJaxBatches: map[string]rayruntime.IterJaxBatchesKwargs{},
		DataConfig: rayruntime.DataConfig{DatasetsToSplit: "all"},
	}}
	names := make([]string, 0, len(c.Datasets))
	for _, n := range c.Datasets {
		names = append(names, n.Name)
	}
	split := func(name string) bool { return len(c.DatasetsToSplit) == 0 || slices.Contains(c.DatasetsToSplit, name) }
	if len(c.DatasetsToSplit) > 0 {
		out.Launcher.DataConfig.DatasetsToSplit = slices.Clone(c.DatasetsToSplit)
		for i, n := range c.DatasetsToSplit {
			if !slices.Contains(names, n) {
				errs = append(errs, field.NotSupported(p.Child("dataset_config", "datasets_to_split").Index(i), n, names))
			}
		}
	}
	for i, td := range c.Datasets {
		dp := p.Child("datasets").Index(i)
		if td.Name != "" && slices.Index(names, td.Name) == i {
			dp = p.Child("datasets").Key(td.Name)
		}
		switch {
		case td.Name == "":
			errs = append(errs, field.Required(dp.Child("name"), "the name get_dataset_shard uses"))
		case slices.Index(names, td.Name) != i:
			errs = append(errs, field.Invalid(dp.Child("name"), td.Name, "duplicate dataset name"))
		}
		if td.Dataset.sink != nil {
			errs = append(errs, field.Forbidden(dp.Child("dataset", "sink"), "a trainer's dataset is iterated by the workers; it cannot end in a write"))
		}
		cd, derrs := td.Dataset.compile(dp.Child("dataset"))
		errs = append(errs, derrs...)
		h := hosts
		h.NotSplit = !split(td.Name)
		pr, perrs := predictAt(dp.Child("iter"), td.Dataset, td.Iter, h)
		if len(derrs) == 0 {
			errs = append(errs, perrs...)
		}
		if pr != nil {
			out.Predictions = append(out.Predictions, NamedPrediction{td.Name, pr})
			out.Findings = append(out.Findings, pr.Findings...)
		}
		kw, _ := td.Iter.compile(dp.Child("iter"))
		out.Launcher.Datasets[td.Name] = cd.Dataset
		out.Launcher.IterJaxBatches[td.Name] = kw
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// predictAt is Predict with the dataset's own errors left to the caller.
func predictAt(p *field.Path, ds Dataset, it IterJaxBatches, hosts Hosts) (*Prediction, field.ErrorList) {
	pr, errs := Predict(p, ds, it, hosts)
	var own field.ErrorList
	for _, e := range errs {
		if !hasPrefix(e.Field, p.Child("dataset").String()) {
			own = append(own, e)
		}
	}
	return pr, own
}

func hasPrefix(f, prefix string) bool {
	return len(f) >= len(prefix) && f[:len(prefix)] == prefix
}

// CompileForTrainer is the hook a JaxTrainer front end calls while it
// compiles: with its worker count, TPU generation ("" for CPU workers) and
// chips per worker, it returns the JSON to embed in its launcher
// configuration (a rayruntime.TrainDatasets) and the warnings to show, or the
// errors at paths below p. It uses only types the trainer already knows,
// so the trainer need not import this package.
func (c DatasetConfig) CompileForTrainer(p *field.Path, workers int, accelerator string, chipsPerHost int) (json.RawMessage, placement.Diagnosis, field.ErrorList) {
	td, errs := c.Compile(p, Hosts{Workers: workers, Accelerator: accelerator, ChipsPerHost: chipsPerHost})
	if len(errs) > 0 {
		return nil, nil, errs
	}
	raw, err := marshal(td.Launcher)
	if err != nil {
		return nil, nil, field.ErrorList{field.Invalid(p, "datasets", fmt.Sprintf("encoding: %v", err))}
	}
	var warn placement.Diagnosis
	for _, f := range td.Findings {
		if f.Severity != placement.SeverityInfo {
			warn = append(warn, f)
		}
	}
	return raw, warn, nil
}
