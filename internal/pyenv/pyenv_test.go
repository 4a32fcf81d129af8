package pyenv_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/pyenv"
)

// The shell setup and the Go side must agree on the stamp, or an installed
// raytpu would build a second virtualenv beside the one make test made.
func TestStampMatchesSetupScript(t *testing.T) {
	t.Parallel()
	req, err := filepath.Abs("requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", `grep -Ev '^[[:space:]]*(#|$)' "$1" | sha256sum | cut -d' ' -f1`, "bash", req).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pyenv.Stamp(), strings.TrimSpace(string(out)); got != want {
		t.Errorf("pyenv.Stamp() = %s, setup-venv.sh computes %s", got, want)
	}
	if !strings.Contains(pyenv.Requirements(), "ray[") {
		t.Errorf("embedded requirements do not name ray: %q", pyenv.Requirements())
	}
}

func TestDirIsUnderCacheRoot(t *testing.T) {
	root := t.TempDir()
	t.Setenv("RAYTPU_CACHE", root)
	dir, err := pyenv.Dir(t.Context(), "python3")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != filepath.Join(root, "venv") || !strings.HasSuffix(dir, "-"+pyenv.Stamp()[:16]) {
		t.Errorf("Dir = %s, want %s/venv/py<ver>-%s", dir, root, pyenv.Stamp()[:16])
	}
	if pyenv.Complete(dir) {
		t.Errorf("Complete(%s) = true for a directory that does not exist", dir)
	}
}
