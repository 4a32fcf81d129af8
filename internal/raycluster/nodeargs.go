package raycluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/rayvocab"
)

func commonArgs(cfg Config, res map[string]float64, labels map[string]string) []string {
	args := []string{
		"--object-store-memory=" + strconv.FormatInt(cfg.ObjectStoreMemory, 10),
		"--min-worker-port=0", "--max-worker-port=0",
		"--disable-usage-stats",
	}
	if len(res) > 0 {
		b, _ := json.Marshal(res)
		args = append(args, "--resources="+string(b))
	}
	if len(labels) > 0 {
		keys := slices.Sorted(maps.Keys(labels))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+labels[k])
		}
		args = append(args, "--labels="+strings.Join(parts, ","))
	}
	return args
}

// posingEnv adds JAX-on-CPU defaults to a node posing as a TPU host.
func posingEnv(n Node) map[string]string {
	return PosingEnv(n.Env, int(n.Resources[rayvocab.ResourceTPU]))
}

// PosingEnv returns a copy of env with what a CPU-only host posing as a
// TPU host of chips chips needs for JAX: when env poses one (it sets
// TPU_NAME), JAX_PLATFORMS=cpu and XLA_FLAGS forcing one CPU device per
// chip, each unless env sets it. The local cluster's nodes and the pod
// runner's TPU pods both pose through it.
func PosingEnv(env map[string]string, chips int) map[string]string {
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env[rayvocab.EnvTPUName]; !ok {
		return env
	}
	if _, ok := env["JAX_PLATFORMS"]; !ok {
		env["JAX_PLATFORMS"] = "cpu"
	}
	if _, ok := env["XLA_FLAGS"]; !ok && chips > 0 {
		env["XLA_FLAGS"] = fmt.Sprintf("--xla_force_host_platform_device_count=%d", chips)
	}
	return env
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("raycluster: pick a free port: %w", err)
		}
		ls = append(ls, l) // held (and so not picked again) until the end
		if p := l.Addr().(*net.TCPAddr).Port; !rayFixedPorts[p] {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// rayFixedPorts are the ports Ray 2.60 binds on its own whatever a node's
// flags say, or by default: a port picked free at start may not be one of
// them. 44227 and 44217 (in Linux's ephemeral range, so a free pick can
// land on them) are the dashboard's and the autoscaler monitor's
// Prometheus exporters, which bind before the dashboard's HTTP port and,
// once on a port meant for a dashboard, answer its GETs with metrics and
// its POSTs with HTTP 405 (see jobsprobe.go). The others are Ray's
// defaults (GCS, dashboard, Ray client, dashboard agent, Serve HTTP and
// gRPC, Serve's HAProxy stats).
var rayFixedPorts = map[int]bool{
	44227: true, // DASHBOARD_METRIC_PORT
	44217: true, // AUTOSCALER_METRIC_PORT
	6379:  true, 8265: true, 10001: true, 52365: true,
	8000: true, 9000: true, 8404: true,
}

// TPUNodes builds the worker nodes of one slice: hosts nodes named
// "<slice>/<i>" with TPU_WORKER_ID i, chipsPerHost TPU and cpus CPUs each.
// podType is Ray's pod type (e.g. "v4-16"), topology e.g. "2x2x2".
func TPUNodes(sliceName, podType, topology string, hosts, chipsPerHost, cpus int) []Node {
	nodes := make([]Node, 0, hosts)
	for i := range hosts {
		nodes = append(nodes, Node{
			Name:      fmt.Sprintf("%s/%d", sliceName, i),
			NumCPUs:   cpus,
			Resources: map[string]float64{rayvocab.ResourceTPU: float64(chipsPerHost)},
			Env:       rayvocab.HostEnv(sliceName, i, podType, topology),
		})
	}
	return nodes
}
