package servecheck

import (
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/runtimeenv"
)

func TestName(t *testing.T) {
	t.Parallel()
	for s, bad := range map[string]bool{
		"": false, "chat": false, "meta-llama/Llama-3.1-8B": false, "v1.0": false, "a..b": false,
		"a\x00": true, "a\x1b[2J": true, "bell\x07": true, "two\nlines": true, "del\x7f": true,
		"../x": true, "a/../b": true, "a/./b": true, `a\..\b`: true, "..": true, ".": true,
	} {
		if got := Name(s) != ""; got != bad {
			t.Errorf("Name(%q) refused=%v, want %v", s, got, bad)
		}
	}
	if Text("a/../b") != "" || Text("x\ty") == "" {
		t.Error("Text refuses a path or accepts a tab")
	}
}

func TestRuntimeEnvPaths(t *testing.T) {
	t.Parallel()
	self := map[string]any{}
	self["self"] = self
	p := field.NewPath("app", "runtime_env")
	errs := RuntimeEnv(p, &runtimeenv.RuntimeEnv{WorkingDir: "ftp://x", PyModules: []string{"local://rel"},
		EnvVars: map[string]string{"1=": "v"}, Extra: map[string]any{"conda": self}})
	got := map[string]bool{}
	for _, r := range field.Refs(errs.Err()) {
		got[r.Field] = true
	}
	for _, want := range []string{"app.runtime_env.working_dir", "app.runtime_env.py_modules[0]", "app.runtime_env.env_vars[1=]", "app.runtime_env.conda[self]"} {
		if !got[want] {
			t.Errorf("no error at %s: %v", want, errs)
		}
	}
	if RuntimeEnv(p, nil) != nil {
		t.Error("nil runtime_env: errors")
	}
	if e := SliceReplicaLimit(func() *field.Path { return p }, 5, 0, 0); e != nil {
		t.Errorf("no bundles per slice: %v", e)
	}
}
