package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/ray"
)

// defaultAddress is the dashboard address when --address is not given:
// RAY_API_SERVER_ADDRESS, then RAY_ADDRESS (as Ray's CLI reads them), then
// the dashboard of the dev cluster recorded in the default state file, then
// the local default.
func defaultAddress() string {
	for _, k := range []string{"RAY_API_SERVER_ADDRESS", "RAY_ADDRESS"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	// A dev cluster started with the default --state picks its own
	// dashboard port; commands run after `dev-cluster up` find it there.
	if c, err := raycluster.LoadState(defaultStateFile()); err == nil && c.DashboardURL != "" {
		return c.DashboardURL
	}
	return "http://127.0.0.1:8265"
}

// dashboardURL reads a dashboard address as Ray's job CLI does: a
// host:port without a scheme ("127.0.0.1:8265", as RAY_ADDRESS often
// holds) is http://host:port; an address with a scheme is left alone.
func dashboardURL(a string) string {
	a = strings.TrimSpace(a)
	if a != "" && !strings.Contains(a, "://") {
		return "http://" + a
	}
	return a
}

// dashboardFlag adds --address to cmd and returns how to get a client of
// the dashboard it names (or the default address).
func dashboardFlag(cmd *cobra.Command) func() (*ray.Client, error) {
	var address string
	cmd.PersistentFlags().StringVar(&address, "address", "", "Ray dashboard URL, or host:port for http://host:port (default: $RAY_API_SERVER_ADDRESS, $RAY_ADDRESS, the running dev-cluster's, http://127.0.0.1:8265)")
	return func() (*ray.Client, error) {
		a := address
		if a == "" {
			a = defaultAddress()
		}
		c, err := ray.NewClient(dashboardURL(a))
		if err != nil {
			return nil, usagef("--address: %v", err)
		}
		if u, err := url.Parse(dashboardURL(a)); err == nil {
			if err := checkDashboardURL(u.Host); err != nil {
				return nil, usagef("--address %s: %v", strconv.Quote(a), err)
			}
		}
		return c, nil
	}
}

func newJobCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Submit, list, inspect, follow and stop Ray jobs through the dashboard",
	}
	client := dashboardFlag(cmd)

	var listOut output
	var listTimeout, statusTimeout, logsTimeout, stopTimeout time.Duration
	list := &cobra.Command{
		Use:   "list",
		Short: "List jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := listOut.check(); err != nil {
				return err
			}
			if err := checkTimeout("timeout", listTimeout); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			var jobs []ray.JobInfo
			if err := timed(cmd.Context(), listTimeout, func(ctx context.Context) (err error) {
				jobs, err = c.ListJobs(ctx)
				return err
			}); err != nil {
				return err
			}
			if listOut.value == "json" {
				return writeJSON(cmd.OutOrStdout(), jobs)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "SUBMISSION ID\tTYPE\tSTATUS\tSTARTED\tDURATION\tENTRYPOINT")
			for _, j := range jobs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", terminalSafe(dash(j.SubmissionID)), terminalSafe(j.Type), terminalSafe(string(j.Status)), when(j.Started()), duration(j), terminalSafe(truncate(j.Entrypoint, 48)))
			}
			return tw.Flush()
		},
	}
	addOutput(list, &listOut, "table", "json")
	list.Flags().DurationVar(&listTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit)")

	var statusOut output
	status := &cobra.Command{
		Use:   "status ID",
		Short: "Show a job's status",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := statusOut.check(); err != nil {
				return err
			}
			if err := checkTimeout("timeout", statusTimeout); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			var j ray.JobInfo
			if err := timed(cmd.Context(), statusTimeout, func(ctx context.Context) (err error) {
				j, err = c.GetJob(ctx, args[0])
				return notFound(err, args[0])
			}); err != nil {
				return err
			}
			if statusOut.value == "json" {
				return writeJSON(cmd.OutOrStdout(), j)
			}
			tw := newTable(cmd.OutOrStdout())
			row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, terminalSafe(v)) }
			row("Submission ID:", dash(j.SubmissionID))
			row("Job ID:", dash(j.JobID))
			row("Status:", string(j.Status))
			row("Message:", dash(j.Message))
			row("Entrypoint:", j.Entrypoint)
			row("Started:", when(j.Started()))
			row("Duration:", duration(j))
			if j.DriverExitCode != nil {
				row("Driver exit code:", fmt.Sprint(*j.DriverExitCode))
			}
			return tw.Flush()
		},
	}
	addOutput(status, &statusOut, "table", "json")
	status.Flags().DurationVar(&statusTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit)")

	var follow bool
	logs := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's driver log; -f follows it until the job ends",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", logsTimeout); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			timeout := logsTimeout
			if follow && !cmd.Flags().Changed("timeout") {
				timeout = 0 // a followed log lasts as long as the job
			}
			return timed(cmd.Context(), timeout, func(ctx context.Context) error {
				if !follow {
					s, err := c.JobLogs(ctx, args[0])
					if err != nil {
						return notFound(err, args[0])
					}
					_, err = io.WriteString(cmd.OutOrStdout(), s)
					return err
				}
				for chunk, err := range c.TailJobLogs(ctx, args[0]) {
					if err != nil {
						return notFound(err, args[0])
					}
					if _, err := io.WriteString(cmd.OutOrStdout(), chunk); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the job ends")
	logs.Flags().DurationVar(&logsTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit); with -f the default is no limit")

	stop := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a job",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout("timeout", stopTimeout); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			var stopped bool
			if err := timed(cmd.Context(), stopTimeout, func(ctx context.Context) (err error) {
				stopped, err = c.StopJob(ctx, args[0])
				return notFound(err, args[0])
			}); err != nil {
				return err
			}
			if stopped {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s: stop requested\n", terminalSafe(args[0]))
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s: already finished\n", terminalSafe(args[0]))
			}
			return nil
		},
	}
	stop.Flags().DurationVar(&stopTimeout, "timeout", defaultCallTimeout, "give up after this long (0: no limit)")
	cmd.AddCommand(list, status, logs, stop, newJobSubmitCmd(client), newJobWaitCmd(client))
	return cmd
}

func notFound(err error, id string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ray.ErrNotFound) {
		return fmt.Errorf("job %q not found", id)
	}
	return err
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func duration(j ray.JobInfo) string {
	start, end := j.Started(), j.Ended()
	if start.IsZero() {
		return "-"
	}
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(start).Round(time.Second).String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
