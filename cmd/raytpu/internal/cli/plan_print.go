package cli

// What `raytpu plan` prints: the table of a slice placement, its
// diagnosis, and the SVG drawing with its bounds.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

// maxSVGHosts and maxSVGBytes bound `plan -o svg`: a drawing of more
// hosts is unreadable, and its size grows with them.
const (
	maxSVGHosts = 4096
	maxSVGBytes = 64 << 20
)

func svgTooLarge(hosts int) error {
	return usagef("-o svg draws at most %d hosts; the simulated cluster (--cluster, or the default for --num-slices) has more (%d or more): use -o table or -o json", maxSVGHosts, hosts)
}

// writeSVG draws the placement into memory, at most maxSVGBytes, and
// writes it to w only when it is whole.
func writeSVG(w io.Writer, c *sim.Cluster, sp *sim.SlicePlacement) error {
	lw := &limitedBuffer{max: maxSVGBytes}
	if err := sim.RenderSVG(lw, c, sp); err != nil {
		if lw.over {
			return usagef("-o svg: the drawing is larger than %d MiB: use -o table or -o json, or a smaller --cluster", maxSVGBytes>>20)
		}
		return err
	}
	_, err := w.Write(lw.buf.Bytes())
	return err
}

// limitedBuffer keeps at most max bytes and fails the write past them.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("output too large")
	}
	return b.buf.Write(p)
}

func printPlan(w io.Writer, g *placement.SliceGroup, r planReport) error {
	fmt.Fprintf(w, "Plan:     %s\n", terminalSafe(g.String()))
	fmt.Fprintf(w, "Hosts:    %d per slice × %d chips, %d TPU per bundle\n", g.HostsPerSlice, g.ChipsPerHost, int(g.BundleResources[rayvocab.ResourceTPU]))
	if r.Autoscaling != nil {
		fmt.Fprintf(w, "Cluster:  %s (simulated, as the autoscaler scales it)\n\n", r.Cluster)
		printAutoscale(w, r.Autoscaling)
	} else {
		fmt.Fprintf(w, "Cluster:  %s (simulated)\n\n", r.Cluster)
	}
	sp := r.Placement
	if len(sp.Heads) > 0 {
		tw := newTable(w)
		fmt.Fprintln(tw, "HEAD\tRESOURCE\tSTATE\tNODE\tSLICE")
		for _, h := range sp.Heads {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", h.Slice, rayvocab.HeadResource(g.PodType), h.State, terminalSafe(dash(h.Node)), terminalSafe(dash(h.SliceName)))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	printBundles(w, sp)
	fmt.Fprintln(w)
	printDiagnosis(w, "Diagnosis", sp.Diagnosis)
	if r.Comparison != nil {
		fmt.Fprintf(w, "\nSame %d chips as %d bundles {TPU: 1}, no topology, SPREAD:\n\n", len(r.Request.Bundles), len(r.Request.Bundles))
		printSliceSummary(w, r.Comparison)
		fmt.Fprintln(w)
		printDiagnosis(w, "Diagnosis without topology", r.Comparison.Diagnosis)
	}
	printCapacity(w, r.Plan, r.Quota)
	return nil
}

func printBundles(w io.Writer, sp *sim.SlicePlacement) {
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tBUNDLE\tSLICE#\tRESOURCES\tSTATE\tNODE\tSLICE")
	for _, b := range sp.Bundles {
		name := "-"
		if b.Group < len(sp.Groups) {
			if name = sp.Groups[b.Group].Name; name == "" {
				name = sp.Groups[b.Group].ID
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", terminalSafe(name), b.Index, b.Slice, terminalSafe(resources(b.Resources)), b.State, terminalSafe(dash(b.Node)), terminalSafe(dash(b.SliceName)))
	}
	tw.Flush()
}

// printSliceSummary counts bundles and TPU per slice.
func printSliceSummary(w io.Writer, sp *sim.SlicePlacement) {
	type row struct{ bundles, tpu int }
	rows := map[string]*row{}
	var order []string
	for _, b := range sp.Bundles {
		key := b.SliceName
		if b.State != sim.StateCreated {
			key = "(" + strings.ToLower(string(b.State)) + ")"
		} else if key == "" {
			key = b.Node
		}
		if rows[key] == nil {
			rows[key] = &row{}
			order = append(order, key)
		}
		rows[key].bundles++
		rows[key].tpu += int(b.Resources[rayvocab.ResourceTPU])
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "SLICE\tBUNDLES\tTPU")
	for _, k := range order {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", terminalSafe(k), rows[k].bundles, rows[k].tpu)
	}
	tw.Flush()
}

func printDiagnosis(w io.Writer, title string, d placement.Diagnosis) {
	fmt.Fprintf(w, "%s:\n", title)
	if len(d) == 0 {
		fmt.Fprintln(w, "  ok: every slice's bundles are placed, each slice on one intact slice")
		return
	}
	for _, f := range d {
		if f.Part != "" {
			fmt.Fprintf(w, "  %-7s %s: %s: %s\n", f.Severity, f.Code, terminalSafe(f.Part), terminalSafe(f.Message))
			continue
		}
		fmt.Fprintf(w, "  %-7s %s: %s\n", f.Severity, f.Code, terminalSafe(f.Message))
	}
}

func resources(m map[string]float64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strconv.FormatFloat(m[k], 'f', -1, 64)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
