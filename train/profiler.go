package train

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayruntime"
)

// ProfilerConfig starts the JAX profiler server (jax.profiler.start_server)
// in every train worker before the train loop runs, so a trace of any
// worker can be captured while it trains (profiler.Capture, raytpu
// profile). The launcher prints where each server listens as a line
//
//	RAYTPU_PROFILER {"rank": 0, "node_id": "...", "ip": "10.0.0.3", "port": 9012, "pid": 4242, "attempt": 1}
//
// in the job's log, once per worker per start of the worker group
// (profiler.Locate reads them back through the dashboard's job logs API;
// after a restart the newest line of a rank wins).
type ProfilerConfig struct {
	// Port is where every worker's server listens, on the worker's node;
	// a worker whose port is taken trains without a server and reports
	// why. A fixed port is refused for more than one non-TPU worker, which
	// may share a node. Optional. Default: 0, a free port picked by each
	// worker, which is what several workers on one node (or several runs)
	// need.
	Port int `json:"port,omitempty"`
}

// compile validates c; a nil c is no profiler.
func (c *ProfilerConfig) compile(p *field.Path) (*rayruntime.TrainProfiler, field.ErrorList) {
	if c == nil {
		return nil, nil
	}
	if c.Port < 0 || c.Port > 65535 {
		return nil, field.ErrorList{field.Invalid(p.Child("port"), c.Port, "must be a TCP port, 1-65535, or 0 to let each worker pick a free one")}
	}
	return &rayruntime.TrainProfiler{Port: c.Port}, nil
}

// checkProfilerPort refuses a fixed port where several workers may share a
// node: CPU or GPU workers, of which Ray packs several on one node. gRPC
// servers set SO_REUSEPORT, so two servers on one port would both start
// and a capture would reach either. TPU workers each hold a whole host.
func checkProfilerPort(p *field.Path, run RunConfig, s ScalingConfig) *field.Error {
	if run.Profiler == nil || run.Profiler.Port == 0 || s.UseTPU || max(s.NumWorkers, s.MaxWorkers) <= 1 {
		return nil
	}
	return field.Invalid(p.Child("port"), run.Profiler.Port, "must be 0 (a free port per worker) when several non-TPU workers may share a node")
}
