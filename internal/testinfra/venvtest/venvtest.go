// Package venvtest finds the project virtualenv's Python for tests that
// ask the installed Ray for its answer. A missing virtualenv fails the
// test with the command that creates it; it never skips.
package venvtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/internal/pyenv"
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
