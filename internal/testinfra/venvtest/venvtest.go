// Package venvtest finds the project virtualenv's Python (and the LLM
// virtualenv's) for tests that ask the installed Ray for its answer. A missing virtualenv fails the
// test with the command that creates it; it never skips.
package venvtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/pyenv"
	"github.com/raytpu/raytpu/internal/testinfra/setupwait"
)

// Python returns the interpreter of $RAYTPU_VENV, else of .venv at the
// root of the repository (the first directory above the working directory
// that holds go.mod) when it exists, else of the raytpu cache's complete
// virtualenv for python3 (package pyenv): the order raycluster finds Ray
// in.
func Python(tb testing.TB) string {
	tb.Helper()
	venv := os.Getenv("RAYTPU_VENV")
	if venv == "" {
		venv = filepath.Join(RepoRoot(tb), ".venv")
		if _, err := os.Stat(venv); err != nil {
			if v, err := pyenv.Dir(context.Background(), "python3"); err == nil && pyenv.Complete(v) {
				venv = v
			}
		}
	}
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		tb.Fatalf("this test needs Ray 2.60 and JAX in the project virtualenv: run scripts/setup-venv.sh (or make test), or set RAYTPU_VENV: %v", err)
	}
	return py
}

// LLMPython returns the interpreter of the LLM virtualenv (Ray 2.60 with
// vLLM, which ray.serve.llm needs; scripts/setup-venv-llm.sh): that of
// $RAYTPU_LLM_VENV, else of .venv-llm at the root of the repository, else
// of the raytpu cache's virtualenv for the repository's
// internal/pyenv/requirements-llm.txt once its install completed. While
// the scripts/setup-venv-llm.sh that make test starts beside the tests
// still installs it, LLMPython waits for it. A missing one fails the test
// with the command that creates it.
func LLMPython(tb testing.TB) string {
	tb.Helper()
	venv := os.Getenv("RAYTPU_LLM_VENV")
	if venv == "" {
		root := RepoRoot(tb)
		// The script keeps its pid in this marker while it runs; a cold
		// install (2.9 GB) takes minutes, longer on a loaded machine.
		marker := filepath.Join(root, ".cache", "venv-llm", "installing")
		if err := setupwait.Wait(marker, "scripts/setup-venv-llm.sh, which installs the LLM virtualenv beside the tests", 40*time.Minute); err != nil {
			tb.Fatal(err)
		}
		venv = filepath.Join(root, ".venv-llm")
		if _, err := os.Stat(venv); err != nil {
			if v, ok := cachedLLMVenv(filepath.Join(root, "internal", "pyenv", "requirements-llm.txt")); ok {
				venv = v
			}
		}
	}
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		tb.Fatalf("this test needs the LLM virtualenv (Ray 2.60 with vLLM 0.29.0): run make setup (or scripts/setup-venv-llm.sh), or set RAYTPU_LLM_VENV: %v", err)
	}
	return py
}

// cachedLLMVenv is the completed virtualenv scripts/setup-venv-llm.sh
// installs from req: $RAYTPU_CACHE/venv-llm/py<version>-<16 hex digits of
// the requirement lines' sha256>, whose .raytpu-stamp holds that sha256.
func cachedLLMVenv(req string) (string, bool) {
	b, err := os.ReadFile(req)
	if err != nil {
		return "", false
	}
	stamp := pyenv.StampOf(string(b))
	root, err := pyenv.CacheRoot()
	if err != nil {
		return "", false
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "venv-llm", "py*-"+stamp[:16]))
	for _, d := range dirs {
		if got, err := os.ReadFile(filepath.Join(d, ".raytpu-stamp")); err == nil && strings.TrimSpace(string(got)) == stamp {
			return d, true
		}
	}
	return "", false
}

// RepoRoot is the first directory above the working directory that holds
// go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
