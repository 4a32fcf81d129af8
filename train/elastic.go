package train

import (
	"github.com/raytpu/raytpu/field"
)

// elasticRange is a ScalingConfig's checked elastic range; zero when the
// group is fixed.
type elasticRange struct {
	min, max  int
	intervalS float64
}

// elastic checks the elastic fields of s with Ray 2.60's rules
// (ray/train/v2/api/config.py, ScalingConfig.__post_init__): an int pair
// with min <= max. raytpu also asks for min >= 1, since a group of 0
// workers would run nothing, and for NumWorkers and NumSlices to be unset.
// The TPU rule (both multiples of the workers per slice) is checked where
// the slice shape is known.
func (s ScalingConfig) elastic(p *field.Path) (elasticRange, field.ErrorList) {
	var errs field.ErrorList
	if s.MinWorkers == 0 && s.MaxWorkers == 0 {
		if s.ElasticResizeMonitorInterval != 0 {
			errs = append(errs, field.Forbidden(p.Child("elasticResizeMonitorInterval"), "applies only to an elastic group (minWorkers and maxWorkers)"))
		}
		return elasticRange{}, errs
	}
	switch {
	case s.MinWorkers < 1:
		errs = append(errs, field.Invalid(p.Child("minWorkers"), s.MinWorkers, "an elastic group needs minWorkers >= 1 and maxWorkers"))
	case s.MaxWorkers < s.MinWorkers:
		errs = append(errs, field.Invalid(p.Child("maxWorkers"), s.MaxWorkers, "must be at least minWorkers"))
	}
	if s.NumWorkers != 0 {
		errs = append(errs, field.Forbidden(p.Child("numWorkers"), "set either numWorkers or minWorkers and maxWorkers"))
	}
	if s.NumSlices != 0 {
		errs = append(errs, field.Forbidden(p.Child("numSlices"), "an elastic group's slices follow minWorkers and maxWorkers"))
	}
	interval, e := seconds(p.Child("elasticResizeMonitorInterval"), s.ElasticResizeMonitorInterval, "the resize interval")
	if e != nil {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return elasticRange{}, errs
	}
	return elasticRange{min: s.MinWorkers, max: s.MaxWorkers, intervalS: interval}, nil
}
