package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/internal/raycluster"
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
		Long: `Start or stop a real local Ray cluster (from the project's .venv, see
scripts/setup-venv.sh) whose worker nodes pose as the TPU hosts of a
simulated cluster spec: each gets TPU_NAME, TPU_WORKER_ID,
TPU_ACCELERATOR_TYPE and TPU_TOPOLOGY and its TPU chips, and runs JAX on CPU.`,
	}
	cmd.PersistentFlags().StringVar(&state, "state", defaultStateFile(), "file that records the running cluster")

	var spec string
	var cpus int
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the cluster, showing its nodes coming up, and print its dashboard URL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sim.ParseSpec(spec)
			if err != nil {
				return err
			}
			if _, err := os.Stat(state); err == nil {
				return fmt.Errorf("a dev cluster is already recorded in %s; run 'raytpu dev-cluster down' first", state)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
			defer cancel()
			nodes := raycluster.NodesFor(s, cpus)
			p := newProgress(cmd.OutOrStdout())
			sp := newStartProgress(ctx, p, len(nodes)+1)
			stopTick := ticking(p)
			c, err := raycluster.Start(ctx, raycluster.Config{
				Nodes:  nodes,
				Detach: true,
				Logger: slog.New(sp),
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
	cmd.AddCommand(up, down)
	return cmd
}
