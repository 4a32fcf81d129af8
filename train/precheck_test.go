package train_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// writeTree writes files (path relative to a fresh dir -> source) and
// returns the dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodLoop = `"""A loop.

def train_fun(config):  (in the docstring: not a definition)
import jax
"""
import os


def train_func(config):
    import jax
    return jax.device_count()
`

func TestTrainLoopChecks(t *testing.T) {
	t.Parallel()
	loopPath := "trainer.train_loop_per_worker"
	cases := []struct {
		name     string
		files    map[string]string
		loop     string
		env      func(dir string) runtimeenv.RuntimeEnv
		errType  field.Type // "" for no error
		suggest  string
		valid    []string
		warnings int
	}{
		{name: "defined", files: map[string]string{"train_loop.py": goodLoop}, loop: "train_loop:train_func"},
		{name: "misspelled function", files: map[string]string{"train_loop.py": goodLoop}, loop: "train_loop:train_fnuc",
			errType: field.TypeNotSupported, suggest: "train_loop:train_func", valid: []string{"train_loop:train_func"}},
		{name: "only in a docstring", files: map[string]string{"train_loop.py": goodLoop}, loop: "train_loop:train_fun",
			errType: field.TypeNotSupported, suggest: "train_loop:train_func", valid: []string{"train_loop:train_func"}},
		{name: "missing module", files: map[string]string{"train_loop.py": goodLoop}, loop: "train_lop:train_func",
			errType: field.TypeInvalid, suggest: "train_loop:train_func"},
		{name: "package module", files: map[string]string{"pkg/__init__.py": "", "pkg/loop/__init__.py": "async def main():\n    pass\n"}, loop: "pkg.loop:main"},
		{name: "module in a package", files: map[string]string{"pkg/__init__.py": "", "pkg/loop.py": "def main(): pass\n"}, loop: "pkg.lop:main",
			errType: field.TypeInvalid, suggest: "pkg.loop:main"},
		{name: "imported name", files: map[string]string{"train_loop.py": "from helpers import (\n    setup,\n    train_func as entry,  # the loop\n)\n"}, loop: "train_loop:entry"},
		{name: "assigned name", files: map[string]string{"train_loop.py": "import functools\nentry: object = functools.partial(print, 1)\n"}, loop: "train_loop:entry"},
		{name: "defined in a top-level try", files: map[string]string{"train_loop.py": "try:\n    def entry():\n        pass\nexcept ImportError:\n    entry = None\n"}, loop: "train_loop:entry"},
		{name: "nested def does not count", files: map[string]string{"train_loop.py": "def outer():\n    def entry():\n        pass\n"}, loop: "train_loop:entry",
			errType: field.TypeNotSupported, valid: []string{"train_loop:outer"}},
		{name: "star import is given the benefit of the doubt", files: map[string]string{"train_loop.py": "from helpers import *\n"}, loop: "train_loop:entry"},
		{name: "module __getattr__ is given the benefit of the doubt", files: map[string]string{"train_loop.py": "def __getattr__(name):\n    return print\n"}, loop: "train_loop:entry"},
		{name: "module-level import jax warns", files: map[string]string{"train_loop.py": "import os\nimport jax.numpy as jnp\n\ndef train_func():\n    pass\n"}, loop: "train_loop:train_func", warnings: 1},
		{name: "module-level from jax warns", files: map[string]string{"train_loop.py": "from jax import numpy as jnp\n\ndef train_func():\n    pass\n"}, loop: "train_loop:train_func", warnings: 1},
		{name: "jax in an import list warns", files: map[string]string{"train_loop.py": "import numpy as np, jax\n\ndef train_func():\n    pass\n"}, loop: "train_loop:train_func", warnings: 1},
		{name: "jaxlib is not jax", files: map[string]string{"train_loop.py": "import jaxlib\n\ndef train_func():\n    pass\n"}, loop: "train_loop:train_func"},
		{name: "pip may provide the module", files: map[string]string{"x.py": ""}, loop: "train_loop:train_func",
			env: func(dir string) runtimeenv.RuntimeEnv {
				return runtimeenv.RuntimeEnv{WorkingDir: dir, Pip: []string{"my-loops==1.0"}}
			}},
		{name: "a URI working dir is not read", loop: "train_loop:train_func",
			env: func(string) runtimeenv.RuntimeEnv { return runtimeenv.RuntimeEnv{WorkingDir: "gcs://_ray_pkg_abc.zip"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, c.files)
			tr := base()
			tr.TrainLoopPerWorker = c.loop
			tr.RuntimeEnv = runtimeenv.RuntimeEnv{WorkingDir: dir}
			if c.env != nil {
				tr.RuntimeEnv = c.env(dir)
			}
			_, warnings, err := tr.CompileWithWarnings()
			errs := field.Errors(err)
			if c.errType == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			} else {
				if len(errs) != 1 || errs[0].Field != loopPath || errs[0].Type != c.errType {
					t.Fatalf("errors = %v, want one %s at %s", err, c.errType, loopPath)
				}
				if errs[0].Suggestion != c.suggest {
					t.Errorf("suggestion = %q, want %q", errs[0].Suggestion, c.suggest)
				}
				if diff := cmp.Diff(c.valid, errs[0].ValidValues); c.valid != nil && diff != "" {
					t.Errorf("valid values (-want +got):\n%s", diff)
				}
			}
			if len(warnings) != c.warnings {
				t.Fatalf("warnings = %q, want %d", warnings, c.warnings)
			}
			for _, w := range warnings {
				if w.Field != loopPath || w.Code != train.CodeModuleLevelJaxImport || w.Severity != placement.SeverityWarning ||
					!strings.HasPrefix(w.Message, "train_loop.py:2 imports jax") && !strings.HasPrefix(w.Message, "train_loop.py:1 imports jax") {
					t.Errorf("warning %q does not name the field, file and line", w)
				}
			}
		})
	}
}

// The examples' own loop passes the checks: it imports JAX inside the
// functions.
func TestExampleLoopPasses(t *testing.T) {
	t.Parallel()
	for _, fn := range []string{"train_func", "data_func"} {
		tr := base()
		tr.TrainLoopPerWorker = "train_loop:" + fn
		tr.RuntimeEnv.WorkingDir = "../examples/jaxtrain/loop"
		_, warnings, err := tr.CompileWithWarnings()
		if err != nil || len(warnings) > 0 {
			t.Errorf("%s: err %v, warnings %q", fn, err, warnings)
		}
	}
}

func TestTopologyAsChipCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, accelerator, topology string
		valid                       []string
		suggest                     string
	}{
		{"v4 16 chips", "v4", "16", []string{"2x2x4"}, "2x2x4"},
		{"v6e 16 chips", "TPU-V6E", "16", []string{"2x8", "4x4"}, ""},
		{"v6e 8 chips", "v6e", "8", []string{"2x4"}, "2x4"},
		{"no v4 slice of 6 chips", "v4", "6", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := base()
			tr.ScalingConfig.Accelerator, tr.ScalingConfig.Topology = c.accelerator, c.topology
			_, err := tr.Compile()
			errs := field.Errors(err)
			if len(errs) != 1 || errs[0].Field != "trainer.scaling_config.topology" || errs[0].Type != field.TypeNotSupported {
				t.Fatalf("errors = %v, want one NotSupported at trainer.scaling_config.topology", err)
			}
			if diff := cmp.Diff(c.valid, errs[0].ValidValues); diff != "" {
				t.Errorf("valid values (-want +got):\n%s", diff)
			}
			if errs[0].Suggestion != c.suggest {
				t.Errorf("suggestion = %q, want %q", errs[0].Suggestion, c.suggest)
			}
		})
	}
	// Without a generation, every generation's shapes of that many chips.
	tr := base()
	tr.ScalingConfig.Accelerator, tr.ScalingConfig.Topology = "", "16"
	got := map[string]field.Type{}
	var valid []string
	_, err := tr.Compile()
	for _, e := range field.Errors(err) {
		got[e.Field] = e.Type
		if e.Field == "trainer.scaling_config.topology" {
			valid = e.ValidValues
		}
	}
	if got["trainer.scaling_config.topology"] != field.TypeNotSupported || got["trainer.scaling_config.accelerator_type"] != field.TypeRequired {
		t.Errorf("errors %v: want NotSupported topology and Required accelerator", got)
	}
	for _, want := range []string{"2x2x4", "4x4"} {
		if !strings.Contains(strings.Join(valid, " "), want) {
			t.Errorf("valid values %v lack %s", valid, want)
		}
	}
}
