package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	list := &cobra.Command{
		Use:   "list",
		Short: "List jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := listOut.check(); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			jobs, err := c.ListJobs(cmd.Context())
			if err != nil {
				return err
			}
			if listOut.value == "json" {
				return writeJSON(cmd.OutOrStdout(), jobs)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "SUBMISSION ID\tTYPE\tSTATUS\tSTARTED\tDURATION\tENTRYPOINT")
			for _, j := range jobs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", dash(j.SubmissionID), j.Type, j.Status, when(j.Started()), duration(j), truncate(j.Entrypoint, 48))
			}
			return tw.Flush()
		},
	}
	addOutput(list, &listOut, "table", "json")

	var statusOut output
	status := &cobra.Command{
		Use:   "status ID",
		Short: "Show a job's status",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := statusOut.check(); err != nil {
				return err
			}
			c, err := client()
			if err != nil {
				return err
			}
			j, err := c.GetJob(cmd.Context(), args[0])
			if err != nil {
				return notFound(err, args[0])
			}
			if statusOut.value == "json" {
				return writeJSON(cmd.OutOrStdout(), j)
			}
			tw := newTable(cmd.OutOrStdout())
			row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
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

	var follow bool
	logs := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's driver log; -f follows it until the job ends",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := client()
			if err != nil {
				return err
			}
			if !follow {
				s, err := c.JobLogs(cmd.Context(), args[0])
				if err != nil {
					return notFound(err, args[0])
				}
				_, err = io.WriteString(cmd.OutOrStdout(), s)
				return err
			}
			for chunk, err := range c.TailJobLogs(cmd.Context(), args[0]) {
				if err != nil {
					return notFound(err, args[0])
				}
				if _, err := io.WriteString(cmd.OutOrStdout(), chunk); err != nil {
					return err
				}
			}
			return nil
		},
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the job ends")

	stop := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a job",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := client()
			if err != nil {
				return err
			}
			stopped, err := c.StopJob(cmd.Context(), args[0])
			if err != nil {
				return notFound(err, args[0])
			}
			if stopped {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s: stop requested\n", args[0])
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s: already finished\n", args[0])
			}
			return nil
		},
	}
	cmd.AddCommand(list, status, logs, stop, newJobSubmitCmd(client), newJobWaitCmd(client))
	return cmd
}

func notFound(err error, id string) error {
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
