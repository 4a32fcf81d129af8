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
			errs = append(errs, field.Forbidden(p.Child("elastic_resize_monitor_interval"), "applies only to an elastic group (min_workers and max_workers)"))
		}
		return elasticRange{}, errs
	}
	switch {
	case s.MinWorkers < 1:
		errs = append(errs, field.Invalid(p.Child("min_workers"), s.MinWorkers, "an elastic group needs min_workers >= 1 and max_workers"))
	case s.MaxWorkers < s.MinWorkers:
		errs = append(errs, field.Invalid(p.Child("max_workers"), s.MaxWorkers, "must be at least min_workers"))
	}
	if s.NumWorkers != 0 {
		errs = append(errs, field.Forbidden(p.Child("num_workers"), "set either num_workers or min_workers and max_workers"))
	}
	if s.NumSlices != 0 {
		errs = append(errs, field.Forbidden(p.Child("num_slices"), "an elastic group's slices follow min_workers and max_workers"))
	}
	interval, e := seconds(p.Child("elastic_resize_monitor_interval"), s.ElasticResizeMonitorInterval, "the resize interval")
	if e != nil {
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return elasticRange{}, errs
	}
	return elasticRange{min: s.MinWorkers, max: s.MaxWorkers, intervalS: interval}, nil
}
