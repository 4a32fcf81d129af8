package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/internal/pyenv"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/sim"
)

// defaultStateFile is where dev-cluster keeps the running cluster's pids.
func defaultStateFile() string {
	return filepath.Join(os.TempDir(), "raytpu-dev-cluster.json")
}

func newDevClusterCmd() *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "dev-cluster",
		Short: "Start or stop a local Ray cluster whose workers pose as TPU hosts",
		Long: `Start or stop a real local Ray cluster whose worker nodes pose as the TPU
hosts of a simulated cluster spec: each gets TPU_NAME, TPU_WORKER_ID,
TPU_ACCELERATOR_TYPE and TPU_TOPOLOGY and its TPU chips, and runs JAX on CPU,
beside a TPU device-plugin emulator whose metrics follow the node's work
(what raytpu top, its SVG heat map and raytpu profile read).

Ray comes from --venv, else $RAYTPU_VENV, else the .venv of the raytpu clone
around the working directory, else the raytpu cache ($RAYTPU_CACHE, default
~/.cache/raytpu), where up installs Ray 2.60 and JAX on first use (a few
minutes; needs python3 with venv and pip, and PyPI).`,
	}
	cmd.PersistentFlags().StringVar(&state, "state", defaultStateFile(), "file that records the running cluster")

	var spec, venv string
	var cpus int
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the cluster, showing its nodes coming up, and print its dashboard URL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cpus < 1 {
				return usagef("--cpus-per-node %d: want at least 1", cpus)
			}
			s, err := sim.ParseSpec(spec)
			if err != nil {
				return err
			}
			if _, err := os.Stat(state); err == nil {
				return fmt.Errorf("a dev cluster is already recorded in %s; run 'raytpu dev-cluster down' first", state)
			}
			if venv == "" {
				if _, err := raycluster.FindVenv(""); errors.Is(err, raycluster.ErrNoRay) {
					if venv, err = pyenv.Ensure(cmd.Context(), "", cmd.ErrOrStderr()); err != nil {
						return err
					}
				}
			}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find the raytpu binary to run the TPU device-plugin emulators: %w", err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			nodes := raycluster.NodesFor(s, cpus)
			p := newProgress(cmd.OutOrStdout())
			sp := newStartProgress(ctx, p, len(nodes)+1)
			stopTick := ticking(p)
			c, err := raycluster.Start(ctx, raycluster.Config{
				Venv:          venv,
				Nodes:         nodes,
				Detach:        true,
				TPUPlugins:    true,
				PluginCommand: []string{self, "dev-cluster", "tpu-plugin"},
				Logger:        slog.New(sp),
			})
			sp.stop()
			stopTick()
			if err != nil {
				p.Done("failed")
				return err
			}
			if err := sp.finalCount(c.DashboardURL); err != nil {
				p.Line(fmt.Sprintf("cannot count nodes: %v", err))
			}
			p.Done("up")
			if err := c.WriteState(state); err != nil {
				return errors.Join(err, c.Stop())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dashboard: %s\ngcs:       %s\nstate:     %s\n", c.DashboardURL, c.GCSAddress, state)
			return nil
		},
	}
	up.Flags().StringVar(&spec, "cluster", "2*v4-16,v4-8", "simulated cluster spec the nodes pose as")
	up.Flags().IntVar(&cpus, "cpus-per-node", 1, "CPUs of each worker node")
	up.Flags().StringVar(&venv, "venv", "", "virtualenv with Ray 2.60 (default: $RAYTPU_VENV, the clone's .venv, or the raytpu cache's, installed on first use)")

	down := &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the recorded cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := raycluster.LoadState(state)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no dev cluster recorded in %s", state)
			}
			if err != nil {
				return err
			}
			if err := c.Stop(); err != nil {
				return err
			}
			if err := os.Remove(state); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "stopped")
			return nil
		},
	}
	cmd.AddCommand(up, down, newTPUPluginCmd())
	return cmd
}

// newTPUPluginCmd is the hidden command a detached dev cluster runs once
// per posing TPU host: one device-plugin emulator that outlives `up` as
// the nodes do and follows its node's load (raycluster.ServePlugin).
func newTPUPluginCmd() *cobra.Command {
	var listen, config, marker string
	cmd := &cobra.Command{
		Use:    "tpu-plugin",
		Short:  "Serve one TPU device-plugin emulator for a dev cluster's host",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cfg tpuplugin.Config
			if err := json.Unmarshal([]byte(config), &cfg); err != nil {
				return fmt.Errorf("--config: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return raycluster.ServePlugin(ctx, listen, cfg, marker)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "host:port to serve /metrics on")
	cmd.Flags().StringVar(&config, "config", "", "the host's emulator config (JSON)")
	cmd.Flags().StringVar(&marker, "node-marker", "", "marker of the node whose workers' load the chips follow")
	for _, f := range []string{"listen", "config"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}
