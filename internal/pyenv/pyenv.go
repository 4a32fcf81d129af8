// Package pyenv finds, and on request creates, the Python virtualenv that
// holds the Ray raytpu runs against: Ray with the dashboard, Train, Data
// and Serve, JAX for CPU and pyarrow, as requirements.txt (embedded here)
// lists them.
//
// Virtualenvs live in the machine's raytpu cache, one per Python version and
// requirements file, shared by every clone and by an installed raytpu
// binary:
//
//	$RAYTPU_CACHE/venv/py3.11-<first 16 hex digits of Stamp()>
//
// where RAYTPU_CACHE defaults to $XDG_CACHE_HOME/raytpu, else
// ~/.cache/raytpu. scripts/setup-venv.sh writes the same layout (and links
// <repo>/.venv to it); a virtualenv is complete when its .raytpu-stamp file
// holds the requirements' sha256.
//
// Package pyenv imports nothing of raytpu's.
package pyenv

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Requirements is the pip requirements file of the virtualenv.
//
//go:embed requirements.txt
var requirements string

// Requirements returns the pip requirements file the virtualenv is built
// from.
func Requirements() string { return requirements }

// Stamp is the sha256 of the requirement lines (comments and blank lines
// left out, so that a comment does not call for a new install), as the
// virtualenv's .raytpu-stamp holds it once the install completed.
// scripts/setup-venv.sh (cache.sh's raytpu_venv) computes the same with
// `grep -Ev '^[[:space:]]*(#|$)' requirements.txt | sha256sum`.
func Stamp() string { return StampOf(requirements) }

// StampOf is the stamp of the requirements file req, as [Stamp] is of the
// embedded one (scripts/setup-venv-llm.sh stamps requirements-llm.txt the
// same way).
func StampOf(req string) string {
	h := sha256.New()
	for line := range strings.Lines(req) {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		io.WriteString(h, strings.TrimSuffix(line, "\n")+"\n")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CacheRoot returns the raytpu cache directory: $RAYTPU_CACHE, else
// $XDG_CACHE_HOME/raytpu, else ~/.cache/raytpu.
func CacheRoot() (string, error) {
	if d := os.Getenv("RAYTPU_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "raytpu"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("pyenv: no cache directory (set RAYTPU_CACHE): %w", err)
	}
	return filepath.Join(home, ".cache", "raytpu"), nil
}

// Dir returns where the virtualenv for python (e.g. "python3") lives in the
// cache.
func Dir(ctx context.Context, python string) (string, error) {
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, python, "-c", `import sys; print("py%d.%d" % sys.version_info[:2])`).Output()
	if err != nil {
		return "", fmt.Errorf("pyenv: %s: %w (Python 3.11 with venv and pip is needed)", python, err)
	}
	return filepath.Join(root, "venv", strings.TrimSpace(string(out))+"-"+Stamp()[:16]), nil
}

// Complete reports whether venv holds a finished install of Requirements.
func Complete(venv string) bool {
	b, err := os.ReadFile(filepath.Join(venv, ".raytpu-stamp"))
	if err != nil || strings.TrimSpace(string(b)) != Stamp() {
		return false
	}
	_, err = os.Stat(filepath.Join(venv, "bin", "ray"))
	return err == nil
}

// SystemPython is the distribution's Python 3.11, which DefaultPython
// prefers.
const SystemPython = "/usr/bin/python3.11"

// DefaultPython returns the interpreter that creates the virtualenv when
// none is named: SystemPython when it can create virtualenvs (on Debian,
// with python3.11-venv installed), else python3 from PATH. Every Ray
// process is a process of this interpreter, and a distribution's CPython
// is built with profile-guided and link-time optimization, where a
// default pyenv build is not; scripts/cache.sh makes the same choice and
// says what it saves.
func DefaultPython(ctx context.Context) string {
	if exec.CommandContext(ctx, SystemPython, "-c", "import venv, ensurepip").Run() == nil {
		return SystemPython
	}
	return "python3"
}

// ErrNoPython is returned when no Python interpreter can create the
// virtualenv.
var ErrNoPython = errors.New("pyenv: python3 not found on PATH (Python 3.11 with venv and pip is needed; or set RAYTPU_VENV to a virtualenv with Ray 2.60)")

// Ensure returns the cache's virtualenv, creating it and installing the
// requirements first when it is missing or incomplete. The install (a
// few minutes and about 2 GB on first use) writes pip's output to progress.
// python is the interpreter that creates it ("" for DefaultPython's).
func Ensure(ctx context.Context, python string, progress io.Writer) (string, error) {
	if python == "" {
		python = DefaultPython(ctx)
	}
	if _, err := exec.LookPath(python); err != nil {
		return "", ErrNoPython
	}
	venv, err := Dir(ctx, python)
	if err != nil {
		return "", err
	}
	if Complete(venv) {
		return venv, nil
	}
	if err := os.MkdirAll(filepath.Dir(venv), 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "installing Ray and JAX into %s (first use; a few minutes)\n", venv)
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		if err := run(ctx, progress, python, "-m", "venv", venv); err != nil {
			return "", err
		}
	}
	req := filepath.Join(venv, "requirements.txt")
	if err := os.WriteFile(req, []byte(requirements), 0o644); err != nil {
		return "", err
	}
	if err := run(ctx, progress, filepath.Join(venv, "bin", "python"), "-m", "pip", "install",
		"--disable-pip-version-check", "--progress-bar", "off", "-r", req); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(venv, ".raytpu-stamp"), []byte(Stamp()+"\n"), 0o644); err != nil {
		return "", err
	}
	return venv, nil
}

func run(ctx context.Context, progress io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pyenv: %s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return nil
}
