package raycluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"

	"github.com/raytpu/raytpu/internal/tpuplugin"
	"github.com/raytpu/raytpu/rayvocab"
)

// EnvTPUDevicePluginAddr is the variable Ray's dashboard agent reads once,
// at start, for the host:port of the GKE TPU device plugin's metrics
// (ray/dashboard/modules/reporter/reporter_agent.py). One failed fetch
// turns TPU collection off for the life of the agent, so the emulator is
// up before the node starts.
const EnvTPUDevicePluginAddr = "TPU_DEVICE_PLUGIN_ADDR"

// observability is what a cluster knows about metrics: every node's
// --metrics-export-port and the device-plugin emulators of its posing
// TPU hosts, by node name.
type observability struct {
	metricsAddrs map[string]string
	plugins      map[string]*tpuplugin.Server
}

// metricsPortArg picks a free port for the named node's metrics export
// and returns the `ray start` flag setting it.
func (c *Cluster) metricsPortArg(name, ip string) (string, error) {
	port, err := freePorts(1)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obs.metricsAddrs == nil {
		c.obs.metricsAddrs = map[string]string{}
	}
	c.obs.metricsAddrs[name] = net.JoinHostPort(ip, strconv.Itoa(port[0]))
	return "--metrics-export-port=" + strconv.Itoa(port[0]), nil
}

// MetricsAddr returns the host:port where the named node's dashboard agent
// serves Prometheus text ("head" for the head, else Node.Name or
// "worker-<i>"), the address Ray's --metrics-export-port set.
func (c *Cluster) MetricsAddr(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.obs.metricsAddrs[name]
	return a, ok
}

// checkPlugins rejects a Config whose emulators could not start, before
// anything is started.
func checkPlugins(cfg Config) error {
	if !cfg.TPUPlugins {
		return nil
	}
	if cfg.Detach && len(cfg.PluginCommand) == 0 {
		return errors.New("raycluster: Config.TPUPlugins with Detach needs Config.PluginCommand: emulators run in this process would die before the nodes")
	}
	for i, n := range cfg.Nodes {
		if _, posing := n.Env[rayvocab.EnvTPUName]; !posing {
			continue
		}
		if _, set := n.Env[EnvTPUDevicePluginAddr]; set {
			return fmt.Errorf("raycluster: node %d (%s): Env sets %s and Config.TPUPlugins is on; set only one", i, nodeName(n, i), EnvTPUDevicePluginAddr)
		}
		if _, err := tpuplugin.ConfigForHost(n.Env, int(n.Resources[rayvocab.ResourceTPU])); err != nil {
			return fmt.Errorf("raycluster: node %d (%s): %w", i, nodeName(n, i), err)
		}
	}
	return nil
}

// startPlugins starts a device-plugin emulator on the address of every
// worker node of cfg that poses as a TPU host and returns the nodes with
// TPU_DEVICE_PLUGIN_ADDR added to their environment (cfg.Nodes is not
// changed). ipPrefix is the cluster's 127.a.b. block. checkPlugins has
// accepted cfg.
func (c *Cluster) startPlugins(ctx context.Context, cfg Config, ipPrefix string) ([]Node, error) {
	if !cfg.TPUPlugins {
		return cfg.Nodes, nil
	}
	nodes := slices.Clone(cfg.Nodes)
	for i, n := range nodes {
		if _, posing := n.Env[rayvocab.EnvTPUName]; !posing {
			continue
		}
		pcfg, err := tpuplugin.ConfigForHost(n.Env, int(n.Resources[rayvocab.ResourceTPU]))
		if err != nil {
			return nil, fmt.Errorf("raycluster: node %d (%s): %w", i, nodeName(n, i), err)
		}
		if len(cfg.PluginCommand) > 0 {
			addr, err := c.spawnPlugin(ctx, cfg.PluginCommand, ipPrefix+strconv.Itoa(i+2), nodeName(n, i), "w"+strconv.Itoa(i), pcfg)
			if err != nil {
				return nil, err
			}
			n.Env = pluginEnv(n.Env, addr)
			nodes[i] = n
			continue
		}
		srv, err := tpuplugin.Start(net.JoinHostPort(ipPrefix+strconv.Itoa(i+2), "0"), pcfg)
		if err != nil {
			return nil, fmt.Errorf("raycluster: node %d (%s): %w", i, nodeName(n, i), err)
		}
		c.mu.Lock()
		if c.obs.plugins == nil {
			c.obs.plugins = map[string]*tpuplugin.Server{}
		}
		c.obs.plugins[nodeName(n, i)] = srv
		c.mu.Unlock()
		n.Env = pluginEnv(n.Env, srv.Addr())
		nodes[i] = n
	}
	return nodes, nil
}

func nodeName(n Node, i int) string {
	if n.Name != "" {
		return n.Name
	}
	return "worker-" + strconv.Itoa(i)
}

// TPUPlugin returns the device-plugin emulator of the named worker node
// when the cluster was started with Config.TPUPlugins and the node poses
// as a TPU host. Set its chips' values; Ray's agent on that node reads
// them every REPORTER_UPDATE_INTERVAL_MS (default 5 s) and exports them
// as the ray_tpu_* gauges on the node's MetricsAddr.
func (c *Cluster) TPUPlugin(name string) (*tpuplugin.Server, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.obs.plugins[name]
	return s, ok
}

// TPUPluginNodes lists the names of the nodes that have an emulator,
// sorted.
func (c *Cluster) TPUPluginNodes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.obs.plugins))
}

// closePlugins stops every emulator.
func (c *Cluster) closePlugins() error {
	c.mu.Lock()
	plugins := c.obs.plugins
	c.obs.plugins = nil
	c.mu.Unlock()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(plugins)) {
		if err := plugins[name].Close(); err != nil {
			errs = append(errs, fmt.Errorf("raycluster: stop the TPU device-plugin emulator of %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// pluginChips maps the IP of every node that has an emulator to its chips.
func pluginChips(cfg Config, ipPrefix string) map[string]int {
	if !cfg.TPUPlugins {
		return nil
	}
	out := map[string]int{}
	for i, n := range cfg.Nodes {
		if _, posing := n.Env[rayvocab.EnvTPUName]; posing {
			out[ipPrefix+strconv.Itoa(i+2)] = int(n.Resources[rayvocab.ResourceTPU])
		}
	}
	return out
}
