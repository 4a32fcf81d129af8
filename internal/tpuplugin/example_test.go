package tpuplugin_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"

	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/rayvocab"
)

// A Server stands beside host 1 of a v6e slice; Ray's agent on that host
// reads it when TPU_DEVICE_PLUGIN_ADDR names s.Addr().
func ExampleServer() {
	cfg, err := tpuplugin.ConfigForHost(rayvocab.HostEnv("slice-a", 1, "v6e-8", "2x4"), 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tpuplugin.Start("127.0.0.1:0", cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	_ = s.Set(2, tpuplugin.Chip{TensorCoreUtilization: 87.5, DutyCycle: 99, MemoryUsed: 8 << 30, MemoryTotal: 32 << 30})

	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		// Chip 2 is index 2 on the host and 1*4+2 = 6 in the slice.
		if line := sc.Text(); strings.Contains(line, "-2\"") && strings.HasPrefix(line, "tensorcore") ||
			strings.Contains(line, "-6\"") && strings.HasPrefix(line, "duty_cycle{") {
			fmt.Println(line)
		}
	}
	// Output:
	// duty_cycle{accelerator_id="7655214000419591399-6",container="ray-worker",make="cloud-tpu",model="tpu-v6e-slice",namespace="default",pod="slice-a-1",tpu_topology="2x4"} 99
	// tensorcore_utilization{accelerator_id="7655214000419591399-2",make="cloud-tpu",model="tpu-v6e-slice",tpu_topology="2x4"} 87.5
}
