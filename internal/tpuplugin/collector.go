package tpuplugin

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Label names of the real plugin's samples.
const (
	LabelAcceleratorID = "accelerator_id"
	LabelMake          = "make"
	LabelModel         = "model"
	LabelTopology      = "tpu_topology"
	LabelContainer     = "container"
	LabelNamespace     = "namespace"
	LabelPod           = "pod"
)

// Family names served.
const (
	FamilyTensorCoreUtilization      = "tensorcore_utilization"
	FamilyMemoryBandwidthUtilization = "memory_bandwidth_utilization"
	FamilyDutyCycle                  = "duty_cycle"
	FamilyDutyCycleNode              = "duty_cycle_node"
	FamilyMemoryUsed                 = "memory_used"
	FamilyMemoryTotal                = "memory_total"
	// NodeSuffix is appended to the node-scoped utilization families when
	// Config.NodeSuffix is set.
	NodeSuffix = "_node"
)

// Make is the make label of every TPU sample.
const Make = "cloud-tpu"

var (
	nodeLabels    = []string{LabelAcceleratorID, LabelMake, LabelModel, LabelTopology}
	runtimeLabels = []string{LabelAcceleratorID, LabelContainer, LabelMake, LabelModel, LabelNamespace, LabelPod, LabelTopology}
)

type collector struct {
	s *Server
	// tensorcore and bandwidth are indexed by NodeSuffix: [0] the names
	// Ray reads, [1] the _node names. Both are described, so the layout
	// can change while the server runs.
	tensorcore, bandwidth   [2]*prometheus.Desc
	dutyNode                *prometheus.Desc
	duty, memUsed, memTotal *prometheus.Desc
}

func (s *Server) collector() *collector {
	const tensorcoreHelp = "Tensorcore percent utilization of the TPU device per node"
	const bandwidthHelp = "Memory bandwidth utilization of the TPU device per node"
	return &collector{
		s: s,
		tensorcore: [2]*prometheus.Desc{
			prometheus.NewDesc(FamilyTensorCoreUtilization, tensorcoreHelp, nodeLabels, nil),
			prometheus.NewDesc(FamilyTensorCoreUtilization+NodeSuffix, tensorcoreHelp, nodeLabels, nil),
		},
		bandwidth: [2]*prometheus.Desc{
			prometheus.NewDesc(FamilyMemoryBandwidthUtilization, bandwidthHelp, nodeLabels, nil),
			prometheus.NewDesc(FamilyMemoryBandwidthUtilization+NodeSuffix, bandwidthHelp, nodeLabels, nil),
		},
		dutyNode: prometheus.NewDesc(FamilyDutyCycleNode, "Percent of time when the TPU was actively processing", nodeLabels, nil),
		duty:     prometheus.NewDesc(FamilyDutyCycle, "Percent of time when the TPU was actively processing", runtimeLabels, nil),
		memUsed:  prometheus.NewDesc(FamilyMemoryUsed, "Allocated TPU memory in bytes", runtimeLabels, nil),
		memTotal: prometheus.NewDesc(FamilyMemoryTotal, "Total memory available on the TPU in bytes", runtimeLabels, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.tensorcore[0], c.tensorcore[1], c.bandwidth[0], c.bandwidth[1], c.dutyNode, c.duty, c.memUsed, c.memTotal} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	chips := c.s.Chips()
	cfg := c.s.cfg
	layout := 0
	if c.s.nodeSuffix.Load() {
		layout = 1
	}
	for i, chip := range chips {
		local := c.s.prefix + "-" + strconv.Itoa(i)
		global := c.s.prefix + "-" + strconv.Itoa(cfg.WorkerID*cfg.Chips+i)
		node := []string{local, Make, cfg.Model, cfg.Topology}
		runtime := []string{global, cfg.Container, Make, cfg.Model, cfg.Namespace, cfg.Pod, cfg.Topology}
		ch <- prometheus.MustNewConstMetric(c.tensorcore[layout], prometheus.GaugeValue, chip.TensorCoreUtilization, node...)
		ch <- prometheus.MustNewConstMetric(c.bandwidth[layout], prometheus.GaugeValue, chip.MemoryBandwidthUtilization, node...)
		ch <- prometheus.MustNewConstMetric(c.dutyNode, prometheus.GaugeValue, chip.DutyCycle, global, Make, cfg.Model, cfg.Topology)
		ch <- prometheus.MustNewConstMetric(c.duty, prometheus.GaugeValue, chip.DutyCycle, runtime...)
		ch <- prometheus.MustNewConstMetric(c.memUsed, prometheus.GaugeValue, chip.MemoryUsed, runtime...)
		ch <- prometheus.MustNewConstMetric(c.memTotal, prometheus.GaugeValue, chip.MemoryTotal, runtime...)
	}
}
