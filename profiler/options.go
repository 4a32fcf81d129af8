package profiler

import (
	"time"

	"github.com/raytpu/raytpu/field"
)

// Defaults of [Options].
const (
	DefaultHostTracerLevel = 2
	DefaultMaxTraceBytes   = 1 << 30
	// MaxDuration bounds Options.Duration: a profile is a sample, and the
	// server holds the whole trace in memory until it ends.
	MaxDuration = 10 * time.Minute
)

// Options configure one capture, like the options of TensorBoard's
// "Capture profile" dialog.
type Options struct {
	// Duration is how long the server traces. Required: more than 0 and
	// at most MaxDuration, in whole milliseconds.
	Duration time.Duration
	// HostTracerLevel is the detail of host (CPU) events: 0 off, 1 user
	// annotations only, 2 adds XLA's runtime events, 3 everything.
	// Optional. Default: 2 (nil).
	HostTracerLevel *int
	// PythonTracer traces Python function calls as well. Optional.
	// Default: false.
	PythonTracer bool
	// NoDeviceTracer turns the device (TPU/GPU) tracer off. Optional.
	// Default: false (device events are traced).
	NoDeviceTracer bool
	// Host names the trace file (<Host>.xplane.pb). Optional. Default: the
	// first host name the server reports in the trace, else the target's
	// host.
	Host string
	// MaxTraceBytes bounds the response the client accepts. Optional.
	// Default: DefaultMaxTraceBytes (1 GiB).
	MaxTraceBytes int
}

// Validate reports every invalid field at once, with paths under path.
func (o Options) Validate(path *field.Path) error {
	var errs field.ErrorList
	switch {
	case o.Duration <= 0:
		errs = append(errs, field.Invalid(path.Child("duration"), o.Duration.String(), "must be more than 0, e.g. 2s"))
	case o.Duration > MaxDuration:
		errs = append(errs, field.Invalid(path.Child("duration"), o.Duration.String(), "must be at most "+MaxDuration.String()))
	case o.Duration%time.Millisecond != 0:
		errs = append(errs, field.Invalid(path.Child("duration"), o.Duration.String(), "must be a whole number of milliseconds"))
	}
	if o.HostTracerLevel != nil && (*o.HostTracerLevel < 0 || *o.HostTracerLevel > 3) {
		errs = append(errs, field.NotSupported(path.Child("hostTracerLevel"), *o.HostTracerLevel, []string{"0", "1", "2", "3"}))
	}
	if o.MaxTraceBytes < 0 {
		errs = append(errs, field.Invalid(path.Child("maxTraceBytes"), o.MaxTraceBytes, "must be at least 0 (0 = 1 GiB)"))
	}
	if err := checkFileName(o.Host); o.Host != "" && err != "" {
		errs = append(errs, field.Invalid(path.Child("host"), o.Host, err))
	}
	return errs.Err()
}

func (o Options) hostTracerLevel() uint32 {
	if o.HostTracerLevel == nil {
		return DefaultHostTracerLevel
	}
	return uint32(*o.HostTracerLevel)
}

func (o Options) maxTraceBytes() int {
	if o.MaxTraceBytes == 0 {
		return DefaultMaxTraceBytes
	}
	return o.MaxTraceBytes
}
