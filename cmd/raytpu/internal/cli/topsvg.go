package cli

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/raytpu/raytpu/observe"
)

// heatMetric is what a heat map colours chips by.
type heatMetric struct {
	name  string
	title string
	value func(observe.Chip) float64 // percent, 0-100
}

const metricTensorCore = "tensorcore"

var heatMetrics = []heatMetric{
	{metricTensorCore, "tensorcore utilization", func(c observe.Chip) float64 { return c.TensorCoreUtilization }},
	{"duty", "duty cycle", func(c observe.Chip) float64 { return c.DutyCycle }},
	{"hbm", "HBM used", func(c observe.Chip) float64 {
		if c.HBMTotal <= 0 {
			return 0
		}
		return 100 * float64(c.HBMUsed) / float64(c.HBMTotal)
	}},
	{"hbm-bw", "HBM bandwidth utilization", func(c observe.Chip) float64 { return c.MemoryBandwidthUtilization }},
}

func heatMetricByName(name string) (heatMetric, bool) {
	for _, m := range heatMetrics {
		if m.name == name {
			return m, true
		}
	}
	return heatMetric{}, false
}

func joinMetrics() string {
	names := make([]string, len(heatMetrics))
	for i, m := range heatMetrics {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// Heat map geometry, in pixels.
const (
	heatCell   = 44
	heatGap    = 3
	heatMargin = 16
	heatTitle  = 24
	heatLabel  = 92 // room for the host labels (worker id or IP) left of the grid
	heatHeader = 16 // room for the chip labels above the grid
	heatSlice  = 20 // space between slices
	heatLegend = 30
)

// heatColor maps 0-100 % onto white → orange → dark red.
func heatColor(p float64) string {
	if math.IsNaN(p) {
		p = 0
	}
	t := math.Max(0, math.Min(1, p/100))
	// Two linear ramps: #ffffff → #fd8d3c → #7f0000.
	lerp := func(a, b, t float64) int { return int(math.Round(a + (b-a)*t)) }
	var r, g, b int
	if t < 0.5 {
		u := t / 0.5
		r, g, b = lerp(255, 253, u), lerp(255, 141, u), lerp(255, 60, u)
	} else {
		u := (t - 0.5) / 0.5
		r, g, b = lerp(253, 127, u), lerp(141, 0, u), lerp(60, 0, u)
	}
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

// writeHeatMap draws each slice as a grid, hosts as rows and chips as
// columns, every chip filled by m and labelled with its value. A host
// without chips is drawn as one grey cell. The bytes depend only on tm
// and m.
func writeHeatMap(w io.Writer, tm observe.TPUMetrics, m heatMetric) error {
	cols := 1
	rows := 0
	for _, s := range tm.Slices {
		rows += len(s.Hosts)
		for _, h := range s.Hosts {
			cols = max(cols, len(h.Chips))
		}
	}
	width := 2*heatMargin + heatLabel + cols*(heatCell+heatGap)
	width = max(width, 320)
	height := 2*heatMargin + heatTitle + len(tm.Slices)*(heatTitle+heatHeader+heatSlice) + rows*(heatCell+heatGap) + heatLegend
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="14" font-weight="bold">TPU %s (%%)</text>`+"\n", heatMargin, heatMargin+14, html.EscapeString(m.title))
	y := heatMargin + heatTitle
	if len(tm.Slices) == 0 {
		fmt.Fprintf(bw, `<text x="%d" y="%d">no TPU nodes in the cluster</text>`+"\n", heatMargin, y+14)
	}
	for _, s := range tm.Slices {
		name := s.Name
		if name == "" {
			name = "(no slice name)"
		}
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", heatMargin, y+14,
			html.EscapeString(strings.Join(nonEmpty(name, s.PodType, s.Model, s.Topology), "  ")))
		y += heatTitle
		x0 := heatMargin + heatLabel
		for c := range cols {
			fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle" fill="#555555">chip %d</text>`+"\n", x0+c*(heatCell+heatGap)+heatCell/2, y+11, c)
		}
		y += heatHeader
		for _, h := range s.Hosts {
			label := fmt.Sprintf("host %d", h.WorkerID)
			if h.WorkerID < 0 {
				label = h.IP
			}
			if h.Stale {
				label += " (stale)"
			}
			fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", heatMargin, y+heatCell/2+4, html.EscapeString(label))
			if len(h.Chips) == 0 {
				why := "no TPU metrics"
				if h.Err != "" {
					why = "unreadable"
				}
				fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="#dddddd"><title>%s</title></rect>`+"\n", x0, y, heatCell, heatCell, html.EscapeString(strings.TrimSpace(why+" "+h.Err)))
				fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle" fill="#555555">n/a</text>`+"\n", x0+heatCell/2, y+heatCell/2+4)
			}
			for _, c := range h.Chips {
				v := m.value(c)
				x := x0 + c.Index*(heatCell+heatGap)
				ink := "#000000"
				if v >= 60 {
					ink = "#ffffff"
				}
				fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999999"><title>%s host %d chip %d (%s): %.1f%%</title></rect>`+"\n",
					x, y, heatCell, heatCell, heatColor(v), html.EscapeString(s.Name), h.WorkerID, c.Index, html.EscapeString(c.DeviceName), v)
				fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle" fill="%s">%.0f</text>`+"\n", x+heatCell/2, y+heatCell/2+4, ink, v)
			}
			y += heatCell + heatGap
		}
		y += heatSlice
	}
	// Legend: 0 … 100 in five steps.
	for i := range 5 {
		p := float64(i) * 25
		x := heatMargin + i*52
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="14" height="14" fill="%s" stroke="#999999"/><text x="%d" y="%d">%.0f%%</text>`+"\n", x, y, heatColor(p), x+18, y+11, p)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
