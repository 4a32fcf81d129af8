package data

import (
	"regexp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// importPath matches a Python "module:attr" or "pkg.module:attr".
var importPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$`)

func checkImport(p *field.Path, v, what string) *field.Error {
	if v == "" {
		return field.Required(p, `a Python import path "module:`+what+`"`)
	}
	if !importPath.MatchString(v) {
		return field.Invalid(p, v, `want a Python import path "module:`+what+`", e.g. "predict:Predictor"`)
	}
	return nil
}

// Filter mirrors Dataset.filter: keep the rows for which Fn returns true,
// or that match Expr. Set exactly one.
type Filter struct {
	// Fn is a Python row predicate "module:function".
	Fn string
	// Expr is a Ray Data expression string, e.g. "score > 0.5".
	Expr string
}

func (f Filter) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	var errs field.ErrorList
	switch {
	case f.Fn == "" && f.Expr == "":
		errs = append(errs, field.Required(p.Child("fn"), "set fn (a Python predicate) or expr (a Ray Data expression)"))
	case f.Fn != "" && f.Expr != "":
		errs = append(errs, field.Forbidden(p.Child("expr"), "set fn or expr, not both"))
	case f.Fn != "":
		if e := checkImport(p.Child("fn"), f.Fn, "function"); e != nil {
			errs = append(errs, e)
		}
	}
	return newOp("filter", struct {
		Fn   string `json:"fn,omitempty"`
		Expr string `json:"expr,omitempty"`
	}{f.Fn, f.Expr}), errs
}

func (Filter) keepsRows() bool { return false }
func (f Filter) clone() Step   { return f }

// RandomShuffle mirrors Dataset.random_shuffle. It keeps the row count.
type RandomShuffle struct {
	// Seed makes the shuffle reproducible. Optional. Default: none.
	Seed *int
	// NumBlocks of the output. Optional. Default: Ray's choice.
	NumBlocks int
}

func (s RandomShuffle) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	var errs field.ErrorList
	if s.NumBlocks < 0 {
		errs = append(errs, field.Invalid(p.Child("numBlocks"), s.NumBlocks, "must be positive, or 0 for Ray's choice"))
	}
	return newOp("random_shuffle", struct {
		Seed      *int `json:"seed,omitempty"`
		NumBlocks int  `json:"num_blocks,omitempty"`
	}{s.Seed, s.NumBlocks}), errs
}

func (RandomShuffle) keepsRows() bool { return true }

func (s RandomShuffle) clone() Step {
	if s.Seed != nil {
		v := *s.Seed
		s.Seed = &v
	}
	return s
}

// Repartition mirrors Dataset.repartition. It keeps the row count. Set
// NumBlocks or TargetNumRowsPerBlock.
type Repartition struct {
	// NumBlocks is the number of output blocks.
	NumBlocks int
	// TargetNumRowsPerBlock sizes blocks by rows instead.
	TargetNumRowsPerBlock int
	// Shuffle performs a full shuffle. Optional. Default: false.
	Shuffle bool
}

func (r Repartition) compile(p *field.Path) (rayruntime.Op, field.ErrorList) {
	var errs field.ErrorList
	switch {
	case r.NumBlocks < 0:
		errs = append(errs, field.Invalid(p.Child("numBlocks"), r.NumBlocks, "must be positive"))
	case r.TargetNumRowsPerBlock < 0:
		errs = append(errs, field.Invalid(p.Child("targetNumRowsPerBlock"), r.TargetNumRowsPerBlock, "must be positive"))
	case r.TargetNumRowsPerBlock > placement.MaxRows:
		errs = append(errs, field.TooMany(p.Child("targetNumRowsPerBlock"), r.TargetNumRowsPerBlock, placement.MaxRows, placement.SourceRows))
	case r.NumBlocks == 0 && r.TargetNumRowsPerBlock == 0:
		errs = append(errs, field.Required(p.Child("numBlocks"), "set numBlocks or targetNumRowsPerBlock"))
	case r.NumBlocks > 0 && r.TargetNumRowsPerBlock > 0:
		errs = append(errs, field.Forbidden(p.Child("targetNumRowsPerBlock"), "set numBlocks or targetNumRowsPerBlock, not both"))
	}
	return newOp("repartition", struct {
		NumBlocks             int  `json:"num_blocks,omitempty"`
		TargetNumRowsPerBlock int  `json:"target_num_rows_per_block,omitempty"`
		Shuffle               bool `json:"shuffle,omitempty"`
	}{r.NumBlocks, r.TargetNumRowsPerBlock, r.Shuffle}), errs
}

func (Repartition) keepsRows() bool { return true }
func (r Repartition) clone() Step   { return r }
