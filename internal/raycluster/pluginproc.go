package raycluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/raytpu/raytpu/internal/tpuplugin"
)

// A detached cluster (Config.Detach) outlives the process that started
// it, so its TPU device-plugin emulators cannot run in that process: each
// runs as a process of its own (Config.PluginCommand, which calls
// ServePlugin), carries the cluster's marker so Stop kills it with the
// nodes, and moves its values with the work on its node (followLoad).

// pluginArgs are the arguments appended to Config.PluginCommand for one
// emulator: where to listen, the host's config and its node's marker.
func pluginArgs(addr string, cfg tpuplugin.Config, nodeMarker string) ([]string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return []string{"--listen", addr, "--config", string(b), "--node-marker", nodeMarker}, nil
}

// spawnPlugin starts one emulator process for the node that will run
// under sub, listening on ip, and waits until it accepts connections.
// It returns the emulator's address.
func (c *Cluster) spawnPlugin(ctx context.Context, cmdline []string, ip, name, sub string, cfg tpuplugin.Config) (string, error) {
	port, err := freePorts(1)
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port[0]))
	args, err := pluginArgs(addr, cfg, c.id+"/"+sub)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(cmdline[0], append(cmdline[1:len(cmdline):len(cmdline)], args...)...)
	logf, err := os.OpenFile(c.tempDir+"/plugin-"+sub+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(baseEnv(), markerEnv+"="+c.id+"/plugin-"+sub)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("raycluster: start the TPU device-plugin emulator of %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return addr, nil
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("raycluster: the TPU device-plugin emulator of %s exited: %v: %s", name, err, tailFile(logf.Name(), 5))
		case <-ctx.Done():
			return "", fmt.Errorf("raycluster: the TPU device-plugin emulator of %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// ServePlugin runs one TPU device-plugin emulator on addr for the host cfg
// describes until ctx ends: the body of Config.PluginCommand. When
// nodeMarker is set, every second the chips' duty cycle and tensor-core
// utilisation follow the CPU the node's Ray workers (processes named
// ray::<task or actor>, idle workers left out) used in that second, and
// memory_used their resident memory spread over the chips, so `raytpu top`
// on a local cluster moves when a workload runs.
func ServePlugin(ctx context.Context, addr string, cfg tpuplugin.Config, nodeMarker string) error {
	srv, err := tpuplugin.Start(addr, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if nodeMarker == "" {
		<-ctx.Done()
		return nil
	}
	followLoad(ctx, srv, nodeMarker)
	return nil
}

// followLoad sets srv's chips from the load of the node's workers each
// second until ctx ends. The node's busy workers are looked up every
// rescanEvery ticks (a scan reads every process's command line) and their
// usage read each tick; Ray's dashboard agent reads the chips every 5 s.
func followLoad(ctx context.Context, srv *tpuplugin.Server, nodeMarker string) {
	const interval, rescanEvery = time.Second, 3
	cfg := srv.Config()
	match := func(m string) bool { return m == nodeMarker || strings.HasPrefix(m, nodeMarker+"r") }
	prev := map[int]float64{}
	var pids []int
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n%rescanEvery == 0 {
			pids = markedPIDsOf(isBusyWorker, match)
		}
		cur := map[int]float64{}
		var busy, rss float64
		for _, pid := range pids {
			cpu, mem, ok := workerUsage(pid)
			if !ok {
				continue
			}
			cur[pid] = cpu
			if p, seen := prev[pid]; seen && cpu >= p {
				busy += cpu - p
			}
			rss += mem
		}
		prev = cur
		util := min(100, 100*busy/interval.Seconds())
		used := rss / float64(cfg.Chips)
		if cfg.MemoryTotal > 0 {
			used = min(used, cfg.MemoryTotal)
		}
		for i := range cfg.Chips {
			_ = srv.Set(i, tpuplugin.Chip{
				TensorCoreUtilization:      util,
				MemoryBandwidthUtilization: util / 2,
				DutyCycle:                  util,
				MemoryUsed:                 used,
				MemoryTotal:                cfg.MemoryTotal,
			})
		}
	}
}

// isBusyWorker says whether the process of /proc directory dir is a Ray
// worker busy with a task or actor: its command line starts with "ray::"
// and is not "ray::IDLE". It reads only the command line, so an emulator
// that follows its node's load each second reads the environment of those
// few processes only, not of every process on the machine.
func isBusyWorker(dir string) bool {
	cmdline, err := os.ReadFile(dir + "/cmdline")
	return err == nil && bytes.HasPrefix(cmdline, []byte("ray::")) && !bytes.HasPrefix(cmdline, []byte("ray::IDLE"))
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux Go supports).
const clockTicks = 100

// workerUsage returns the CPU seconds used so far and the resident bytes
// of a Ray worker busy with a task or actor (its command line starts with
// "ray::" and is not "ray::IDLE"); ok is false for any other process.
func workerUsage(pid int) (cpu, rss float64, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	if !isBusyWorker(dir) {
		return 0, 0, false
	}
	return processUsage(dir)
}

// processUsage returns the CPU seconds used so far (user + system) and
// the resident bytes of the process whose /proc directory is dir.
func processUsage(dir string) (cpu, rss float64, ok bool) {
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15, rss (pages) 24.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 22 {
		return 0, 0, false
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	pages, _ := strconv.ParseFloat(f[21], 64)
	return (utime + stime) / clockTicks, pages * float64(os.Getpagesize()), true
}

// pluginEnv adds TPU_DEVICE_PLUGIN_ADDR to a node's environment.
func pluginEnv(env map[string]string, addr string) map[string]string {
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env[EnvTPUDevicePluginAddr] = addr
	return env
}
