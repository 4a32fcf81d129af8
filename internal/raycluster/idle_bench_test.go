package raycluster_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/sim"
)

// BenchmarkIdleClusterCPU measures what a started, idle local cluster
// costs the machine: the CPU its processes (GCS, raylets, dashboard and
// its agents, log monitors, ...) use while no workload runs, as the
// tests' shared clusters sit between tests. It starts the tests' usual
// cluster (2*v4-16,v4-8: a head and five hosts), lets it settle for 20 s,
// then reads every cluster process's CPU time from /proc over 60 s and
// reports milliseconds of CPU per second of wall time, in all and by kind
// of process:
//
//	go test -run '^$' -bench IdleClusterCPU -benchtime 1x ./internal/raycluster
func BenchmarkIdleClusterCPU(b *testing.B) {
	spec, err := sim.ParseSpec("2*v4-16,v4-8")
	if err != nil {
		b.Fatal(err)
	}
	c := raytest.Start(b, raycluster.Config{Nodes: raycluster.NodesFor(spec, 1)})
	const settle, window = 20 * time.Second, 60 * time.Second
	time.Sleep(settle)
	b.ResetTimer()
	for b.Loop() {
		before := cpuByKind(c.Processes())
		began := time.Now()
		time.Sleep(window)
		after := cpuByKind(c.Processes())
		secs := time.Since(began).Seconds()
		var total float64
		for _, k := range slices.Sorted(maps.Keys(after)) {
			ms := (after[k] - before[k]) / secs
			total += ms
			b.ReportMetric(ms, "cpu-ms/s:"+k)
		}
		b.ReportMetric(total, "cpu-ms/s")
	}
}

// cpuByKind sums the CPU time (user + system, in ms) of pids by kind.
func cpuByKind(pids []int) map[string]float64 {
	out := map[string]float64{}
	for _, pid := range pids {
		cpu, ok := raycluster.ProcessCPU(pid)
		if !ok {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out[processKind(string(cmd))] += cpu * 1000
	}
	return out
}

func processKind(cmd string) string {
	for _, k := range []struct{ needle, kind string }{
		{"gcs_server", "gcs"}, {"raylet/raylet", "raylet"}, {"dashboard/agent.py", "agent"},
		{"runtime_env/agent", "runtime_env_agent"}, {"log_monitor.py", "log_monitor"},
		{"dashboard/dashboard.py", "dashboard"}, {"ray-dashboard-", "dashboard_modules"},
		{"monitor.py", "autoscaler_monitor"}, {"bin/ray\x00start", "ray_start"},
	} {
		if strings.Contains(cmd, k.needle) {
			return k.kind
		}
	}
	// Ray's actors and workers name themselves ray::<class or IDLE>.
	name, _, _ := strings.Cut(cmd, "\x00")
	if title, ok := strings.CutPrefix(name, "ray::"); ok {
		title, _, _ = strings.Cut(title, " ")
		return "ray::" + title
	}
	return "other"
}
