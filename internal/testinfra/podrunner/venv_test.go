package podrunner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
)

// A virtualenv under /tmp, which every container replaces with its own,
// is refused when the runner starts, naming it, instead of leaving every
// Ray pod to crash on "ray: command not found".
func TestVenvUnderTmpIsRefused(t *testing.T) {
	t.Parallel()
	venv := t.TempDir()
	if !strings.HasPrefix(venv, "/tmp/") {
		t.Fatalf("t.TempDir() is %s, not under /tmp: set TMPDIR=/tmp for this test", venv)
	}
	for _, bin := range []string{"python", "ray"} {
		if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(venv, "bin", bin), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := podrunner.Start(t.Context(), nil, nil, podrunner.Options{Venv: venv})
	if err == nil || !strings.Contains(err.Error(), venv+" is under /tmp") {
		t.Errorf("Start with the virtualenv %s: %v, want it refused as under /tmp", venv, err)
	}
}
