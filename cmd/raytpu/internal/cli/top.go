package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/raytpu/raytpu/observe"
)

// topFlags are the flags of `raytpu top`.
type topFlags struct {
	out      output
	once     bool
	interval time.Duration
	metric   string
	nodeAddr []string
	timeout  time.Duration
}

func newTopCmd() *cobra.Command {
	var f topFlags
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show every TPU slice's chips as Ray reports them (tensorcore, duty cycle, HBM)",
		Long: `top reads the ray_tpu_* gauges every TPU node's dashboard agent exports
(from the GKE TPU device plugin) and shows one table per slice: a row per
chip of every host, with tensorcore utilization, duty cycle and HBM used
out of total. On a terminal the table is redrawn every --interval; when
output is not a terminal every reading is printed after a timestamp line.
--once prints one reading and exits. -o svg writes a heat map of each
slice's chips (hosts as rows, chips as columns) coloured by --metric;
-o json the reading as data. Both imply --once.`,
		Args: cobra.NoArgs,
	}
	client := dashboardFlag(cmd)
	addOutput(cmd, &f.out, "table", "json", "svg")
	cmd.Flags().BoolVar(&f.once, "once", false, "print one reading and exit")
	cmd.Flags().DurationVar(&f.interval, "interval", 2*time.Second, "time between readings")
	cmd.Flags().StringVar(&f.metric, "metric", metricTensorCore, "heat map metric: "+joinMetrics())
	cmd.Flags().DurationVar(&f.timeout, "timeout", defaultCallTimeout, "give up on a reading after this long, every request of it included (0: no limit)")
	cmd.Flags().StringArrayVar(&f.nodeAddr, "node-addr", nil, "NODE=HOST:PORT: read the metrics of the node of this IP or id at HOST:PORT instead of its own IP and metrics port (from outside a Kubernetes cluster, a kubectl port-forward); repeatable")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := f.out.check(); err != nil {
			return err
		}
		if f.interval <= 0 {
			return usagef("--interval %v: want a positive duration such as 2s", f.interval)
		}
		if err := checkTimeout("timeout", f.timeout); err != nil {
			return err
		}
		m, ok := heatMetricByName(f.metric)
		if !ok {
			return usagef("--metric %q is not supported (valid: %s)", f.metric, joinMetrics())
		}
		var ropts []observe.Option
		if len(f.nodeAddr) > 0 {
			addrs, err := parseNodeAddrs(f.nodeAddr)
			if err != nil {
				return err
			}
			ropts = append(ropts, observe.WithNodeAddr(observe.NodeAddrs(addrs)))
		}
		c, err := client()
		if err != nil {
			return err
		}
		r, err := observe.NewReader(c, ropts...)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		ctx := cmd.Context()
		once := f.once || f.out.value != "table"
		tty := isTerminal(w)
		for {
			var tm observe.TPUMetrics
			err := timed(ctx, f.timeout, func(ctx context.Context) (err error) {
				tm, err = r.TPUMetrics(ctx)
				return err
			})
			switch {
			case err == nil:
			case once:
				return err
			case ctx.Err() != nil:
				return nil // interrupted: a refreshing top ends quietly
			}
			var buf bytes.Buffer
			switch f.out.value {
			case "json":
				err = writeJSON(&buf, tm)
			case "svg":
				err = writeHeatMap(&buf, tm, m)
			default:
				if !once {
					if tty {
						buf.WriteString("\x1b[H\x1b[2J")
					}
					fmt.Fprintf(&buf, "raytpu top  %s  %s  every %v\n\n", c.BaseURL(), time.Now().Format(time.DateTime), f.interval)
				}
				if err != nil {
					// Keep refreshing: the cluster may come back.
					fmt.Fprintf(&buf, "error: %s\n", terminalSafe(err.Error()))
					err = nil
					break
				}
				err = writeTopTable(&buf, tm)
			}
			if err != nil {
				return err
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
			if once {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(f.interval):
			}
		}
	}
	return cmd
}

// parseNodeAddrs reads --node-addr values, NODE=HOST:PORT each.
func parseNodeAddrs(vals []string) (map[string]string, error) {
	m := make(map[string]string, len(vals))
	for _, v := range vals {
		node, addr, ok := strings.Cut(v, "=")
		if ok && node != "" {
			if _, port, err := net.SplitHostPort(addr); err == nil && port != "" {
				if _, dup := m[node]; dup {
					return nil, usagef("--node-addr %q: node %s given twice", v, node)
				}
				m[node] = addr
				continue
			}
		}
		return nil, usagef("--node-addr %q: want NODE=HOST:PORT (NODE a node IP or id), e.g. 10.8.0.12=127.0.0.1:18080", v)
	}
	return m, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeTopTable writes one table per slice, a row per chip.
func writeTopTable(w io.Writer, tm observe.TPUMetrics) error {
	if len(tm.Slices) == 0 {
		_, err := fmt.Fprintln(w, "no TPU nodes in the cluster")
		return err
	}
	for i, s := range tm.Slices {
		if i > 0 {
			fmt.Fprintln(w)
		}
		name := s.Name
		if name == "" {
			name = "(no slice name)"
		}
		fmt.Fprintf(w, "SLICE %s  %s  %s  %s  %s, %s\n", terminalSafe(name), terminalSafe(dash(s.PodType)), terminalSafe(dash(s.Model)), terminalSafe(dash(s.Topology)), plural(len(s.Hosts), "host"), plural(s.Chips(), "chip"))
		stale := false
		tw := newTable(w)
		fmt.Fprintln(tw, "HOST\tIP\tCHIP\tDEVICE\tTENSORCORE\tDUTY CYCLE\tHBM BW\tHBM USED/TOTAL")
		for _, h := range s.Hosts {
			host := strconv.Itoa(h.WorkerID)
			if h.WorkerID < 0 {
				host = "-"
			}
			switch {
			case h.Err != "":
				fmt.Fprintf(tw, "%s\t%s\t-\t-\tunreadable: %s\n", host, terminalSafe(h.IP), terminalSafe(h.Err))
			case len(h.Chips) == 0:
				fmt.Fprintf(tw, "%s\t%s\t-\t-\tno TPU metrics from Ray\n", host, terminalSafe(h.IP))
			}
			if h.Stale {
				host += "*"
				stale = true
			}
			for j, c := range h.Chips {
				hostCol, ipCol := host, terminalSafe(h.IP)
				if j > 0 {
					hostCol, ipCol = "", ""
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", hostCol, ipCol, c.Index, terminalSafe(dash(c.DeviceName)),
					percent(c.TensorCoreUtilization), percent(c.DutyCycle), percent(c.MemoryBandwidthUtilization), hbm(c.HBMUsed, c.HBMTotal))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if stale {
			fmt.Fprintln(w, "* stale: Ray's agent read no TPU data from the device plugin in its latest round; these are the last values it exported")
		}
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func percent(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

// hbm formats used/total bytes in GiB.
func hbm(used, total int64) string {
	const gib = 1 << 30
	return fmt.Sprintf("%.1f/%.1f GiB", float64(used)/gib, float64(total)/gib)
}
