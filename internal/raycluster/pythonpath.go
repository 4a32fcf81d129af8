package raycluster

import (
	"maps"
	"os"
	"strings"
)

// AddPythonPath puts dirs at the front of PYTHONPATH for every node of cfg,
// the head's processes and each worker's (Ray's workers and actors inherit
// it), ahead of any PYTHONPATH that HeadEnv or a Node's Env already set.
// It is how modules that must live outside any runtime_env reach the
// cluster's base Python: Serve's proxy actor, for one, imports the
// generated gRPC code of grpc_options.grpc_servicer_functions without a
// runtime_env. It copies every map and slice it changes.
func (cfg *Config) AddPythonPath(dirs ...string) {
	if len(dirs) == 0 {
		return
	}
	add := strings.Join(dirs, string(os.PathListSeparator))
	cfg.HeadEnv = withPythonPath(cfg.HeadEnv, add)
	nodes := make([]Node, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		n.Env = withPythonPath(n.Env, add)
		nodes[i] = n
	}
	cfg.Nodes = nodes
}

func withPythonPath(env map[string]string, add string) map[string]string {
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	if old := env["PYTHONPATH"]; old != "" {
		add += string(os.PathListSeparator) + old
	}
	env["PYTHONPATH"] = add
	return env
}
