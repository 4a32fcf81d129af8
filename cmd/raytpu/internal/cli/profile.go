package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/profiler"
)

func newProfileCmd() *cobra.Command {
	var (
		job, target, dir, run    string
		app, deployment, replica string
		worker, host             int
		duration, timeout        time.Duration
		hostLevel                int
		python, noDevice         bool
	)
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Capture a JAX profiler trace of a train worker or Serve replica host into a TensorBoard/XProf log dir",
		Long: `Capture a JAX profiler trace of one train worker, or one TPU host of a
Serve replica, for a duration.

With --job, the job must run a JaxTrainer with RunConfig.Profiler set: its
launcher starts jax.profiler's server in every worker and prints where each
listens in the job's log, which this command reads through the dashboard.
With --app, the deployment must own TPU slices and set Deployment.Profiler:
raytpu's replica runtime starts the server on every host and the replica
prints where on its standard output, which the dashboard's log API serves.
--replica is the replica's index among the running replicas ordered by
replica id, or its id. With --target the server is given directly
(host:port).

The trace is written to <dir>/plugins/profile/<run>/<host>.xplane.pb; open it
with "tensorboard --logdir <dir>" (profile plugin) or "xprof <dir>". A trace
without events is refused and not written.`,
		Example: `  raytpu profile --address http://127.0.0.1:8265 --job raysubmit_abc --worker 0 --duration 2s -o ./profiles
  raytpu profile --app chat --deployment LLM --replica 0 --host 1 -o ./profiles`,
		Args: cobra.NoArgs,
	}
	client := dashboardFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&job, "job", "", "submission id of the training job")
	f.IntVar(&worker, "worker", 0, "world rank of the worker to trace")
	f.StringVar(&app, "app", "", "Serve application of the replica to trace")
	f.StringVar(&deployment, "deployment", "", "deployment of the replica (with --app)")
	f.StringVar(&replica, "replica", "0", "replica index or id (with --app)")
	f.IntVar(&host, "host", 0, "TPU host rank in the replica's slice (with --app)")
	f.StringVar(&target, "target", "", "host:port of a profiler server, instead of --job or --app")
	f.DurationVar(&duration, "duration", 2*time.Second, "how long to trace")
	f.StringVarP(&dir, "out-dir", "o", "", "log directory to write the trace under (required)")
	f.StringVar(&run, "run", "", "run directory name (default: the capture's start time, 2006_01_02_15_04_05)")
	f.DurationVar(&timeout, "timeout", 0, "give up after this long, finding the server and the trace included (0: --duration plus 1m)")
	f.IntVar(&hostLevel, "host-tracer-level", profiler.DefaultHostTracerLevel, "host events: 0 off, 1 annotations, 2 XLA runtime, 3 all")
	f.BoolVar(&python, "python-tracer", false, "trace Python function calls too")
	f.BoolVar(&noDevice, "no-device-tracer", false, "do not trace device (TPU/GPU) activity")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case dir == "":
			return usagef("--out-dir (-o) is required: the log directory to write the trace under")
		}
		modes := 0
		for _, set := range []bool{job != "", app != "", target != ""} {
			if set {
				modes++
			}
		}
		if modes != 1 {
			return usagef("give one of --job (with --worker), --app (with --deployment, --replica, --host) or --target")
		}
		if app != "" && deployment == "" {
			return usagef("--app needs --deployment")
		}
		for _, f := range []struct{ flag, mode string }{{"worker", job}, {"deployment", app}, {"replica", app}, {"host", app}} {
			if f.mode == "" && cmd.Flags().Changed(f.flag) {
				return usagef("--%s does not go with the mode given (--job takes --worker; --app takes --deployment, --replica, --host)", f.flag)
			}
		}
		for _, f := range []struct {
			flag string
			v    int
		}{{"worker", worker}, {"host", host}} {
			if f.v < 0 {
				return usagef("--%s %d: must be 0 or more (a rank)", f.flag, f.v)
			}
		}
		opts := profiler.Options{Duration: duration, HostTracerLevel: &hostLevel, PythonTracer: python, NoDeviceTracer: noDevice}
		if err := opts.Validate(nil); err != nil {
			return flagErrors(err, map[string]string{"duration": "--duration", "hostTracerLevel": "--host-tracer-level"})
		}
		// Everything the command line gives is checked before any request
		// and before the capture.
		if target != "" {
			if err := checkTarget(target); err != nil {
				return err
			}
		}
		if run != "" {
			if err := checkRunName(run); err != nil {
				return err
			}
		}
		if err := checkDirFlag("--out-dir", dir, true); err != nil {
			return err
		}
		if err := checkTimeout("timeout", timeout); err != nil {
			return err
		}
		if timeout == 0 {
			timeout = duration + time.Minute
		}
		if target != "" {
			return timed(cmd.Context(), timeout, func(ctx context.Context) error {
				return capture(ctx, cmd, target, target, opts, dir, run)
			})
		}
		c, err := client()
		if err != nil {
			return err
		}
		return timed(cmd.Context(), timeout, func(ctx context.Context) error {
			var target, what string
			var err error
			if job != "" {
				target, opts.Host, what, err = jobWorkerTarget(ctx, c, job, worker)
			} else {
				target, opts.Host, what, err = replicaHostTarget(ctx, c, app, deployment, replica, host)
			}
			if err != nil {
				return err
			}
			return capture(ctx, cmd, target, what, opts, dir, run)
		})
	}
	return cmd
}

// capture traces target for opts.Duration and writes the trace under
// dir/plugins/profile/run.
func capture(ctx context.Context, cmd *cobra.Command, target, what string, opts profiler.Options, dir, run string) error {
	start := time.Now()
	tr, err := profiler.Capture(ctx, target, opts)
	if err != nil {
		return err
	}
	if run == "" {
		run = profiler.RunName(start)
	}
	path, err := tr.WriteLogDir(dir, run)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "traced %s for %s: %d planes, %d events, %d bytes\n", terminalSafe(what), opts.Duration, len(tr.Summary.Planes), tr.Summary.Events(), len(tr.XSpace))
	tw := newTable(out)
	fmt.Fprintln(tw, "PLANE\tLINES\tEVENTS\tEVENT NAMES")
	for _, p := range tr.Summary.Planes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", terminalSafe(p.Name), p.Lines, p.Events, len(p.EventCounts))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\nopen with: tensorboard --logdir %s   (or: xprof %s)\n", terminalSafe(path), terminalSafe(dir), terminalSafe(dir))
	return nil
}

// checkTarget refuses a --target that is not host:port with a port from
// 1 to 65535 and a host name or address without spaces or control
// characters.
func checkTarget(target string) error {
	host, port, err := net.SplitHostPort(target)
	if err == nil && host != "" && !strings.ContainsAny(host, " \t/") && terminalSafe(host) == host {
		if n, perr := strconv.Atoi(port); perr == nil && n >= 1 && n <= 65535 {
			return nil
		}
	}
	return usagef("--target %s: want host:port of a JAX profiler server, e.g. 10.0.0.5:9999", strconv.Quote(capText(target, maxArg)))
}

// checkRunName refuses a --run that is not one directory name.
func checkRunName(run string) error {
	switch {
	case run == "." || run == "..":
		return usagef("--run %q: want a directory name, not . or ..", run)
	case strings.ContainsAny(run, `/\`):
		return usagef("--run %s: want one directory name, without a path separator", strconv.Quote(capText(run, maxArg)))
	case len(run) > 255:
		return usagef("--run: a %d-byte name, want at most 255 bytes", len(run))
	case terminalSafe(run) != run:
		return usagef("--run %s: holds a control or non-printable character", strconv.Quote(run))
	}
	return nil
}
