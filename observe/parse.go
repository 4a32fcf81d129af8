package observe

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/raytpu/raytpu/internal/nilness"
)

// The gauges Ray 2.60 exports per TPU chip, and their labels
// (ray/dashboard/modules/reporter/reporter_agent.py: METRICS_GAUGES;
// ray/dashboard/consts.py: TPU_TAG_KEYS).
const (
	GaugeTensorCoreUtilization      = "ray_tpu_tensorcore_utilization"
	GaugeMemoryBandwidthUtilization = "ray_tpu_memory_bandwidth_utilization"
	GaugeDutyCycle                  = "ray_tpu_duty_cycle"
	GaugeMemoryUsed                 = "ray_tpu_memory_used"
	GaugeMemoryTotal                = "ray_tpu_memory_total"

	LabelTpuIndex      = "TpuIndex"
	LabelTpuDeviceName = "TpuDeviceName"
	LabelTpuType       = "TpuType"
	LabelTpuTopology   = "TpuTopology"
)

// gaugePrefix starts every TPU gauge's name.
const gaugePrefix = "ray_tpu_"

// Export is the TPU part of one node's metrics export.
type Export struct {
	// Model and Topology are the TpuType and TpuTopology labels.
	Model, Topology string
	// Chips are sorted by index.
	Chips []Chip
}

// ParseExport reads one node's Prometheus text (what its metrics export
// port serves at /metrics) and returns its TPU chips. Families other than
// the ray_tpu_* gauges are skipped before parsing; a sample without a
// valid TpuIndex is an error, and so is a nil r (or a nil pointer in it).
func ParseExport(r io.Reader) (Export, error) {
	if nilness.Is(r) {
		return Export{}, errors.New("observe: ParseExport: nil reader: pass a reader of one node's /metrics text")
	}
	tpuText, err := tpuLines(r)
	if err != nil {
		return Export{}, fmt.Errorf("observe: read metrics: %w", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(tpuText))
	if err != nil {
		return Export{}, fmt.Errorf("observe: parse metrics: %w", err)
	}
	var out Export
	byIndex := map[int]*Chip{}
	for _, g := range []struct {
		name string
		set  func(*Chip, float64)
	}{
		{GaugeTensorCoreUtilization, func(c *Chip, v float64) { c.TensorCoreUtilization = v }},
		{GaugeDutyCycle, func(c *Chip, v float64) { c.DutyCycle = v }},
		{GaugeMemoryBandwidthUtilization, func(c *Chip, v float64) { c.MemoryBandwidthUtilization = v }},
		{GaugeMemoryUsed, func(c *Chip, v float64) { c.HBMUsed = int64(v) }},
		{GaugeMemoryTotal, func(c *Chip, v float64) { c.HBMTotal = int64(v) }},
	} {
		fam := fams[g.name]
		if fam == nil {
			continue
		}
		for _, m := range fam.GetMetric() {
			l := tpuLabelsOf(m)
			idx, err := strconv.Atoi(l.index)
			if err != nil || idx < 0 {
				return Export{}, fmt.Errorf("observe: %s: label %s=%q: want a chip index >= 0", g.name, LabelTpuIndex, l.index)
			}
			c := byIndex[idx]
			if c == nil {
				c = &Chip{Index: idx, DeviceName: l.device}
				byIndex[idx] = c
			}
			g.set(c, value(m))
			out.Model = cmp.Or(out.Model, l.model)
			out.Topology = cmp.Or(out.Topology, l.topology)
		}
	}
	out.Chips = make([]Chip, 0, len(byIndex))
	for _, c := range byIndex {
		out.Chips = append(out.Chips, *c)
	}
	slices.SortFunc(out.Chips, func(a, b Chip) int { return a.Index - b.Index })
	return out, nil
}

// tpuLines keeps the lines of the ray_tpu_* families (samples and their
// HELP and TYPE comments): a node exports hundreds of other samples that
// the parser need not build.
func tpuLines(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		rest := line
		if bytes.HasPrefix(rest, []byte("# HELP ")) || bytes.HasPrefix(rest, []byte("# TYPE ")) {
			rest = rest[len("# HELP "):]
		}
		if bytes.HasPrefix(rest, []byte(gaugePrefix)) {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), sc.Err()
}

// tpuLabels are the labels of a TPU gauge sample that matter here.
type tpuLabels struct{ index, device, model, topology string }

func tpuLabelsOf(m *dto.Metric) tpuLabels {
	var out tpuLabels
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case LabelTpuIndex:
			out.index = l.GetValue()
		case LabelTpuDeviceName:
			out.device = l.GetValue()
		case LabelTpuType:
			out.model = l.GetValue()
		case LabelTpuTopology:
			out.topology = l.GetValue()
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}
