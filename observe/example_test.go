package observe_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/observe"
	"github.com/raytpu/raytpu/ray"
)

// ParseExport reads the ray_tpu_* gauges out of what a node's metrics
// export port serves; Group sorts nodes into slices and hosts by their
// TPU labels. (Reader.TPUMetrics does both against a live cluster.)
func ExampleGroup() {
	export := `# TYPE ray_tpu_tensorcore_utilization gauge
ray_tpu_tensorcore_utilization{TpuIndex="0",TpuDeviceName="42-0",TpuType="tpu-v6e-slice",TpuTopology="2x2",ip="10.0.0.2"} 87.5
ray_tpu_tensorcore_utilization{TpuIndex="1",TpuDeviceName="42-1",TpuType="tpu-v6e-slice",TpuTopology="2x2",ip="10.0.0.2"} 12
# TYPE ray_tpu_duty_cycle gauge
ray_tpu_duty_cycle{TpuIndex="0",TpuDeviceName="42-0",TpuType="tpu-v6e-slice",TpuTopology="2x2",ip="10.0.0.2"} 99
ray_tpu_duty_cycle{TpuIndex="1",TpuDeviceName="42-1",TpuType="tpu-v6e-slice",TpuTopology="2x2",ip="10.0.0.2"} 40
# TYPE ray_tpu_memory_used gauge
ray_tpu_memory_used{TpuIndex="0",TpuDeviceName="42-0",TpuType="tpu-v6e-slice",TpuTopology="2x2",ip="10.0.0.2"} 8.589934592e+09
# TYPE ray_node_cpu_count gauge
ray_node_cpu_count{ip="10.0.0.2"} 180
`
	exp, err := observe.ParseExport(strings.NewReader(export))
	if err != nil {
		fmt.Println(err)
		return
	}
	host := ray.Node{ID: "n1", IP: "10.0.0.2", State: "ALIVE", Labels: map[string]string{
		"ray.io/tpu-slice-name": "slice-a", "ray.io/tpu-worker-id": "0", "ray.io/tpu-pod-type": "v6e-4",
	}}
	m := observe.Group([]observe.NodeExport{{Node: host, Export: exp}})
	for _, s := range m.Slices {
		fmt.Printf("slice %s (%s, %s, %s)\n", s.Name, s.PodType, s.Model, s.Topology)
		for _, h := range s.Hosts {
			for _, c := range h.Chips {
				fmt.Printf("  host %d chip %d: tensorcore %.1f%%, duty %.0f%%, HBM %d GiB\n",
					h.WorkerID, c.Index, c.TensorCoreUtilization, c.DutyCycle, c.HBMUsed>>30)
			}
		}
	}
	// Output:
	// slice slice-a (v6e-4, tpu-v6e-slice, 2x2)
	//   host 0 chip 0: tensorcore 87.5%, duty 99%, HBM 8 GiB
	//   host 0 chip 1: tensorcore 12.0%, duty 40%, HBM 0 GiB
}

// A Reader reads every TPU node of a live cluster through its dashboard.
func ExampleReader_TPUMetrics() {
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		panic(err)
	}
	r, err := observe.NewReader(c, observe.WithParallelism(64))
	if err != nil {
		panic(err)
	}
	m, err := r.TPUMetrics(context.Background())
	if err != nil {
		panic(err)
	}
	for _, s := range m.Slices {
		for _, h := range s.Hosts {
			if h.Err != "" {
				fmt.Printf("%s host %d: %s\n", s.Name, h.WorkerID, h.Err)
			}
			for _, chip := range h.Chips {
				fmt.Printf("%s host %d chip %d: %.0f%% busy, %d of %d bytes HBM\n",
					s.Name, h.WorkerID, chip.Index, chip.DutyCycle, chip.HBMUsed, chip.HBMTotal)
			}
		}
	}
}

// From outside a Kubernetes cluster the node IPs the dashboard reports
// are out of reach: forward each Ray pod's metrics port (kubectl
// port-forward) and tell the Reader where each node's export now is, by
// node id or IP.
func ExampleNodeAddrs() {
	addr := observe.NodeAddrs(map[string]string{
		"10.8.0.12": "127.0.0.1:18080", // kubectl port-forward pod/...-worker-0 18080:8080
		"10.8.0.13": "127.0.0.1:18081",
	})
	for _, n := range []ray.Node{{IP: "10.8.0.12"}, {IP: "10.8.0.13"}, {IP: "10.8.0.99"}} {
		fmt.Printf("%s -> %q\n", n.IP, addr(n))
	}
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = observe.NewReader(c, observe.WithNodeAddr(addr))
	fmt.Println("reader:", err)
	// Output:
	// 10.8.0.12 -> "127.0.0.1:18080"
	// 10.8.0.13 -> "127.0.0.1:18081"
	// 10.8.0.99 -> ""
	// reader: <nil>
}
