package raycluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddPythonPath(t *testing.T) {
	t.Parallel()
	nodeEnv := map[string]string{"TPU_NAME": "a", "PYTHONPATH": "/old"}
	cfg := Config{Nodes: []Node{{Name: "a", Env: nodeEnv}, {Name: "b"}}}
	orig := cfg.Nodes
	cfg.AddPythonPath("/x", "/y")
	want := []map[string]string{
		{"TPU_NAME": "a", "PYTHONPATH": "/x:/y:/old"},
		{"PYTHONPATH": "/x:/y"},
	}
	for i, n := range cfg.Nodes {
		if diff := cmp.Diff(want[i], n.Env); diff != "" {
			t.Errorf("node %d env (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(map[string]string{"PYTHONPATH": "/x:/y"}, cfg.HeadEnv); diff != "" {
		t.Errorf("head env (-want +got):\n%s", diff)
	}
	if nodeEnv["PYTHONPATH"] != "/old" || orig[1].Env != nil {
		t.Errorf("AddPythonPath changed the caller's maps or nodes: %v, %v", nodeEnv, orig[1].Env)
	}
}
