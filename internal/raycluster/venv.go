package raycluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		if v := os.Getenv("RAYTPU_VENV"); v != "" {
			venv = v
		} else {
			root, err := RepoRoot()
			if err != nil {
				return "", fmt.Errorf("%w (%v)", ErrNoRay, err)
			}
			venv = filepath.Join(root, ".venv")
		}
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
