package data

import (
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayruntime"
)

// SaveModes returns Ray's SaveMode values for writes, in order; a fresh
// slice each call.
func SaveModes() []string { return slices.Clone(saveModes) }

var saveModes = []string{"append", "overwrite", "create", "ignore", "error"}

// WriteParquet mirrors Dataset.write_parquet.
type WriteParquet struct {
	// Path is the output directory. Required.
	Path string
	// PartitionCols writes a Hive-partitioned directory tree. Optional.
	PartitionCols []string
	// MinRowsPerFile and MaxRowsPerFile bound the rows of each file.
	// Optional. Default: one file per block.
	MinRowsPerFile, MaxRowsPerFile int
	// Mode is one of SaveModes. Optional. Default: "append".
	Mode string
}

// WriteJSON mirrors Dataset.write_json (JSON lines).
type WriteJSON struct {
	// Path is the output directory. Required.
	Path string
	// MinRowsPerFile bounds the rows of each file. Optional.
	MinRowsPerFile int
	// Mode is one of SaveModes. Optional. Default: "append".
	Mode string
}

func checkSink(p *field.Path, path, mode string, counts ...count) field.ErrorList {
	var errs field.ErrorList
	if path == "" {
		errs = append(errs, field.Required(p.Child("path"), "an output directory (local, gs://, s3://)"))
	}
	if mode != "" && !slices.Contains(saveModes, mode) {
		errs = append(errs, field.NotSupported(p.Child("mode"), mode, SaveModes()))
	}
	for _, c := range counts {
		if c.v < 0 {
			errs = append(errs, field.Invalid(p.Child(c.name), c.v, "must be positive, or 0 for Ray's default"))
		}
	}
	return errs
}

// count is a named count field of a sink.
type count struct {
	name string
	v    int
}

func (w WriteParquet) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	errs := checkSink(p, w.Path, w.Mode, count{"minRowsPerFile", w.MinRowsPerFile}, count{"maxRowsPerFile", w.MaxRowsPerFile})
	if w.MaxRowsPerFile > 0 && w.MinRowsPerFile > w.MaxRowsPerFile {
		errs = append(errs, field.Invalid(p.Child("minRowsPerFile"), w.MinRowsPerFile, "must not exceed maxRowsPerFile"))
	}
	return newOp("write_parquet", struct {
		Path           string   `json:"path"`
		PartitionCols  []string `json:"partition_cols,omitempty"`
		MinRowsPerFile int      `json:"min_rows_per_file,omitempty"`
		MaxRowsPerFile int      `json:"max_rows_per_file,omitempty"`
		Mode           string   `json:"mode,omitempty"`
	}{w.Path, w.PartitionCols, w.MinRowsPerFile, w.MaxRowsPerFile, w.Mode}), errs
}

func (w WriteParquet) clone() Sink {
	w.PartitionCols = slices.Clone(w.PartitionCols)
	return w
}

func (w WriteJSON) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	errs := checkSink(p, w.Path, w.Mode, count{"minRowsPerFile", w.MinRowsPerFile})
	return newOp("write_json", struct {
		Path           string `json:"path"`
		MinRowsPerFile int    `json:"min_rows_per_file,omitempty"`
		Mode           string `json:"mode,omitempty"`
	}{w.Path, w.MinRowsPerFile, w.Mode}), errs
}

func (w WriteJSON) clone() Sink { return w }
