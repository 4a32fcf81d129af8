package train

import (
	"strconv"
	"strings"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayruntime"
)

// JaxConfig mirrors ray.train.v2.jax.JaxConfig, the JAX backend's
// configuration: whether each worker sets JAX_PLATFORMS (to tpu or cuda,
// unless the worker's environment already sets it) and calls
// jax.distributed.initialize(coordinator, num_workers, rank) before the
// train function runs. With neither set, the backend does nothing and the
// train function sets JAX up itself.
//
// A nil *JaxConfig on the trainer is Ray's default: JaxConfig(use_tpu=
// ScalingConfig.UseTPU, use_gpu=ScalingConfig.UseGPU).
type JaxConfig struct {
	// UseTPU initialises JAX distributed on TPU. It needs
	// ScalingConfig.UseTPU (workers without TPU cannot run it).
	UseTPU bool `json:"use_tpu,omitempty"`
	// UseGPU initialises JAX distributed on CUDA. It needs
	// ScalingConfig.UseGPU. Exclusive with UseTPU.
	UseGPU bool `json:"use_gpu,omitempty"`
}

var jaxConfigPath = trainerPath.Child("jax_config")

func (c *JaxConfig) compile(s ScalingConfig) (*rayruntime.TrainJax, field.ErrorList) {
	if c == nil {
		return nil, nil
	}
	var errs field.ErrorList
	if c.UseTPU && c.UseGPU {
		errs = append(errs, field.Forbidden(jaxConfigPath.Child("use_gpu"), "use_tpu and use_gpu are exclusive"))
	}
	if c.UseTPU && !s.UseTPU {
		errs = append(errs, field.Invalid(jaxConfigPath.Child("use_tpu"), true, "needs trainer.scaling_config.use_tpu: the workers would set JAX_PLATFORMS=tpu without a TPU"))
	}
	if c.UseGPU && !s.UseGPU {
		errs = append(errs, field.Invalid(jaxConfigPath.Child("use_gpu"), true, "needs trainer.scaling_config.use_gpu: the workers would look for CUDA devices they do not have"))
	}
	return &rayruntime.TrainJax{UseTPU: c.UseTPU, UseGPU: c.UseGPU}, errs
}

// logLevels are the levels Ray Train's LoggingConfig accepts (Python's
// logging level names).
var logLevels = []string{"CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET"}

// checkLogLevel validates RunConfig.LogLevel, case-insensitively as Ray.
func checkLogLevel(p *field.Path, level string) (string, *field.Error) {
	if level == "" {
		return "", nil
	}
	up := strings.ToUpper(level)
	for _, l := range logLevels {
		if up == l {
			return up, nil
		}
	}
	return "", field.NotSupported(p, level, logLevels)
}

// seconds turns a duration option into Ray's float seconds, rejecting a
// negative one.
func seconds(p *field.Path, d time.Duration, what string) (float64, *field.Error) {
	if d < 0 {
		return 0, field.Invalid(p, d.String(), what+" cannot be negative")
	}
	return d.Seconds(), nil
}

// startTimeoutEnv is the environment variable through which Ray Train
// 2.60 reads its worker group start timeout (and head reservation
// timeout): ray/train/v2/_internal/constants.py,
// WORKER_GROUP_START_TIMEOUT_S_ENV_VAR.
const startTimeoutEnv = "RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S"

// startTimeoutValue formats a start timeout as the env var's value.
func startTimeoutValue(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// checkControllerLimit validates FailureConfig.ControllerFailureLimit.
func checkControllerLimit(p *field.Path, n int) *field.Error {
	if n < 0 {
		return field.Invalid(p, n, "must be 0 (no retries) or a positive count; leave it unset for Ray's default of no limit")
	}
	return nil
}
