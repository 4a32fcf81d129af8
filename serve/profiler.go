package serve

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serveconfig"
)

// validateProfiler checks d.Profiler at p.
func (d *Deployment) validateProfiler(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, set := d.UserConfig[serveconfig.ProfilerKey]; set {
		errs = append(errs, field.Forbidden(p.Child("user_config").Key(serveconfig.ProfilerKey), "reserved for raytpu's replica runtime; set Deployment.Profiler instead"))
	}
	if d.Profiler == nil {
		return errs
	}
	pp := p.Child("profiler")
	if !d.hasTopology() {
		errs = append(errs, field.Forbidden(pp, "needs accelerator_config.topology: raytpu's replica runtime, which owns the slice's hosts, starts the profiler servers"))
	}
	if d.Profiler.Port < 0 || d.Profiler.Port > 65535 {
		errs = append(errs, field.Invalid(pp.Child("port"), d.Profiler.Port, "must be a TCP port, 1-65535, or 0 to let each host pick a free one"))
	}
	return errs
}
