package serve

import (
	"github.com/raytpu/raytpu/field"
)

// ProfilerKey is the key of a slice deployment's user_config under which
// raytpu's replica runtime finds its [ProfilerConfig]. It is reserved.
const ProfilerKey = "raytpu_profiler"

// ProfilerConfig starts the JAX profiler server (jax.profiler.start_server)
// on every TPU host of every replica of a deployment whose replicas own a
// slice (AcceleratorConfig with a Topology; raytpu's replica runtime,
// tpu_slice, starts it after jax.distributed.initialize and before the
// user's class is built). The replica prints where each host's server
// listens as a line
//
//	RAYTPU_PROFILER {"app": "...", "deployment": "...", "replica": "...", "host": 0, "node_id": "...", "ip": "...", "port": 9012, "pid": 4242}
//
// on its standard output, which the dashboard serves by actor id (GET
// /api/v0/logs/file?actor_id=<replica actor>&suffix=out); raytpu profile
// --app --deployment --replica --host reads it there and captures a trace.
type ProfilerConfig struct {
	// Port is where every host's server listens, on the host's node.
	// Optional. Default: 0, a free port picked by each host worker.
	Port int `json:"port,omitempty"`
}

// validateProfiler checks d.Profiler at p.
func (d *Deployment) validateProfiler(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, set := d.UserConfig[ProfilerKey]; set {
		errs = append(errs, field.Forbidden(p.Child("userConfig").Key(ProfilerKey), "reserved for raytpu's replica runtime; set Deployment.Profiler instead"))
	}
	if d.Profiler == nil {
		return errs
	}
	pp := p.Child("profiler")
	if !d.hasTopology() {
		errs = append(errs, field.Forbidden(pp, "needs acceleratorConfig.topology: raytpu's replica runtime, which owns the slice's hosts, starts the profiler servers"))
	}
	if d.Profiler.Port < 0 || d.Profiler.Port > 65535 {
		errs = append(errs, field.Invalid(pp.Child("port"), d.Profiler.Port, "must be a TCP port, 1-65535, or 0 to let each host pick a free one"))
	}
	return errs
}
