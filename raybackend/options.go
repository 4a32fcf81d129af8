package raybackend

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/raytpu/raytpu/ray"
)

// An Option configures a Backend. Options validate their input and copy
// anything mutable; New returns the first invalid one's error, which names
// the option, the bad value and what is valid.
type Option interface {
	apply(*Backend) error
}

type optionFunc func(*Backend) error

func (f optionFunc) apply(b *Backend) error { return f(b) }

// WithPackageOptions sets how a plan's working_dir is packaged (excludes,
// size limit, compression). Default: the ray package's defaults. The
// options are copied; PackageOptions.MaxSize must be 0 (the default) or
// in (0, ray.GCSStorageMaxSize).
func WithPackageOptions(o ray.PackageOptions) Option {
	return optionFunc(func(b *Backend) error {
		if err := o.Validate(); err != nil {
			return fmt.Errorf("raybackend: WithPackageOptions: %w", err)
		}
		o.Excludes = append([]string(nil), o.Excludes...)
		o.Extra = maps.Clone(o.Extra)
		b.pkg = o
		return nil
	})
}

// WithPollInterval sets how often a running job's or application's status
// is read. Default: 1s. It must be positive.
func WithPollInterval(d time.Duration) Option {
	return optionFunc(func(b *Backend) error {
		if d <= 0 {
			return fmt.Errorf("raybackend: WithPollInterval(%v): the interval must be positive (the default is %v)", d, defaultPoll)
		}
		b.poll = d
		return nil
	})
}

// WithLogger sets the logger for the backend's own debug events. Default:
// silent.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(b *Backend) error {
		if l == nil {
			return errors.New("raybackend: WithLogger(nil): pass a logger, or no option for a silent backend")
		}
		b.logger = l
		return nil
	})
}

// defaultPoll is WithPollInterval's default.
const defaultPoll = time.Second
