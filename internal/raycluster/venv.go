package raycluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/raytpu/raytpu/internal/pyenv"
)

// Python returns the virtualenv's python.
func (c *Cluster) Python() string { return filepath.Join(c.venv, "bin", "python") }

// Venv returns the virtualenv directory.
func (c *Cluster) Venv() string { return c.venv }

// RepoRoot returns the first directory holding go.mod at or above the
// working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("raycluster: no go.mod above the working directory")
		}
		dir = parent
	}
}

func resolveVenv(venv string) (string, error) {
	if venv == "" {
		venv = defaultVenv()
	}
	if venv == "" {
		return "", fmt.Errorf("%w; none in $RAYTPU_VENV, <repo>/.venv or the raytpu cache", ErrNoRay)
	}
	venv, err := filepath.Abs(venv)
	if err != nil {
		return "", err
	}
	for _, bin := range []string{"python", "ray"} {
		if _, err := os.Stat(filepath.Join(venv, "bin", bin)); err != nil {
			return "", fmt.Errorf("%w; %s is missing from virtualenv %s", ErrNoRay, filepath.Join("bin", bin), venv)
		}
	}
	return venv, nil
}

// defaultVenv is the virtualenv used when none is given: $RAYTPU_VENV,
// else .venv at the root of the repository around the working directory
// when it has Ray, else the raytpu cache's complete virtualenv for python3
// (package pyenv), else "".
func defaultVenv() string {
	if v := os.Getenv("RAYTPU_VENV"); v != "" {
		return v
	}
	if root, err := RepoRoot(); err == nil {
		v := filepath.Join(root, ".venv")
		if _, err := os.Stat(filepath.Join(v, "bin", "ray")); err == nil {
			return v
		}
	}
	if v, err := pyenv.Dir(context.Background(), "python3"); err == nil && pyenv.Complete(v) {
		return v
	}
	return ""
}
