package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/serve"
)

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Deploy, watch and delete Ray Serve applications through the dashboard",
		Long: `Deploy, watch and delete Ray Serve applications on a Ray cluster through
its dashboard's Serve REST API. An application file is YAML with the field
names of serve.Application (name, route_prefix, import_path, runtime_env,
deployments with num_replicas, autoscaling_config, accelerator_config, ...);
it is validated in full before anything is sent. Deploying or deleting one
application leaves every other one running.

To see where an application's replicas would land, use
'raytpu plan -f app.yaml' on the simulated cluster.`,
	}
	client := dashboardFlag(cmd)
	var dash links        // set by server
	notes := &waitNotes{} // what the backend says while a wait goes on
	server := func() (*raybackend.Backend, error) {
		c, err := client()
		if err != nil {
			return nil, err
		}
		dash = newLinks(c.BaseURL())
		b, err := raybackend.New(c, raybackend.WithLogger(slog.New(notes)))
		if err != nil {
			return nil, err
		}
		return b, nil
	}

	var file string
	var wait bool
	var timeout, stuckAfter time.Duration
	deploy := &cobra.Command{
		Use:   "deploy -f APP.yaml",
		Short: "Validate and deploy an application (declarative: the same file again changes nothing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("deploy needs -f APP.yaml")
			}
			if err := checkTimeout("timeout", timeout); err != nil {
				return err
			}
			if !wait && cmd.Flags().Changed("stuck-after") {
				// As --max-slices without --autoscale: a flag that would
				// change nothing is refused, never ignored.
				return usagef("--stuck-after needs --wait")
			}
			plan, err := loadApplication(file) // every problem, before any request
			if err != nil {
				return err
			}
			s, err := server()
			if err != nil {
				return err
			}
			// --timeout bounds the whole command: the upload and the deploy
			// request, and with --wait the wait.
			return timed(cmd.Context(), timeout, func(ctx context.Context) error {
				w := cmd.OutOrStdout()
				up := newProgress(w)
				stop := ticking(up)
				uctx, uploaded := withUploadProgress(ctx, up, "working_dir")
				st, err := s.Deploy(uctx, plan)
				stop()
				if uploaded() {
					up.Done("working_dir uploaded, deploy request answered")
				}
				if err != nil {
					return err
				}
				printStatus(w, st)
				if !wait {
					fmt.Fprintf(w, "application: %s\nmetrics: %s\n", dash.ServeApp(plan.Name), dash.Metrics())
					return nil
				}
				return waitApp(ctx, w, s, dash, notes, plan.Name, 0, stuckAfter)
			})
		},
	}
	deploy.Flags().StringVarP(&file, "file", "f", "", "application file (YAML)")
	deploy.Flags().BoolVar(&wait, "wait", false, "wait until the application is RUNNING")
	deploy.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long the deploy may take, the upload, the request and with --wait the wait included (0: no limit)")
	deploy.Flags().DurationVar(&stuckAfter, "stuck-after", backend.DefaultStuckAfter, "with --wait: diagnose an application still DEPLOYING after this long, and stop if it is stuck, not while the cluster's autoscaler starts nodes (negative: never)")

	var statusTimeout, deleteTimeout time.Duration
	status := &cobra.Command{
		Use:   "status NAME",
		Short: "Print an application's status and its deployments",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", statusTimeout); err != nil {
				return err
			}
			s, err := server()
			if err != nil {
				return err
			}
			var st *backend.ServiceStatus
			if err := timed(cmd.Context(), statusTimeout, func(ctx context.Context) (err error) {
				st, err = s.Status(ctx, args[0])
				return err
			}); err != nil {
				return err
			}
			printStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}
	status.Flags().DurationVar(&statusTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit)")

	var waitTimeout, waitStuck time.Duration
	waitCmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until an application is RUNNING, printing each change; exit 1 if it fails or the timeout passes",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", waitTimeout); err != nil {
				return err
			}
			s, err := server()
			if err != nil {
				return err
			}
			return timed(cmd.Context(), waitTimeout, func(ctx context.Context) error {
				return waitApp(ctx, cmd.OutOrStdout(), s, dash, notes, args[0], 0, waitStuck)
			})
		},
	}
	waitCmd.Flags().DurationVar(&waitTimeout, "timeout", 10*time.Minute, "how long to wait (0: no limit)")
	waitCmd.Flags().DurationVar(&waitStuck, "stuck-after", backend.DefaultStuckAfter, "diagnose an application still DEPLOYING after this long from the cluster's placement groups and nodes, and stop if it is stuck, not while the cluster's autoscaler starts nodes for it (negative: never)")

	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete one application; the others keep running",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", deleteTimeout); err != nil {
				return err
			}
			s, err := server()
			if err != nil {
				return err
			}
			if err := timed(cmd.Context(), deleteTimeout, func(ctx context.Context) error { return serve.Delete(ctx, s, args[0]) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", terminalSafe(args[0]))
			return nil
		},
	}
	del.Flags().DurationVar(&deleteTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit)")
	cmd.AddCommand(deploy, status, waitCmd, del)
	return cmd
}

func printStatus(w io.Writer, st *backend.ServiceStatus) {
	fmt.Fprintf(w, "application %s: %s\n", terminalSafe(st.Name), terminalSafe(string(st.State)))
	if st.Message != "" {
		fmt.Fprintf(w, "  %s\n", terminalSafe(st.Message))
	}
	if len(st.Deployments) > 0 {
		tw := newTable(w)
		fmt.Fprintln(tw, "DEPLOYMENT\tSTATUS\tREPLICAS\tMESSAGE")
		for _, d := range st.Deployments {
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\n", terminalSafe(d.Name), terminalSafe(string(d.Status)), d.Replicas, d.TargetReplicas, terminalSafe(dash(d.Message)))
		}
		tw.Flush()
	}
	if len(st.Diagnosis) > 0 {
		fmt.Fprintln(w, "Diagnosis:")
		for _, f := range st.Diagnosis {
			fmt.Fprintf(w, "  %s\n", terminalSafe(fmt.Sprint(f)))
		}
	}
}
