package rayruntime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// TestPython runs the Python unit tests beside the scripts
// (python/test_*.py) with the project virtualenv's Python, against the
// runtime laid out as the backends ship it: Files in one directory,
// WriteModule's package in another. They import Ray but start no cluster.
// A missing virtualenv fails the test with the command that creates it.
func TestPython(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	root := t.TempDir()
	launcherDir, replicaDir, testDir := filepath.Join(root, "launcher"), filepath.Join(root, "replica"), filepath.Join(root, "tests")
	for _, d := range []string{launcherDir, replicaDir, testDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files, err := rayruntime.Files(&placement.Plan{APIVersion: placement.APIVersion, Name: "unit", Job: &placement.Job{Launcher: rayruntime.EntryTrain}})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(launcherDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rayruntime.WriteModule(replicaDir); err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob("python/*test*.py")
	if err != nil || len(tests) < 3 {
		t.Fatalf("found %d Python test files (%v), want test_runtime.py, test_launcher.py, test_replica.py and their helper", len(tests), err)
	}
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(testDir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), py, "-m", "unittest", "discover", "-v", "-s", testDir, "-p", "test_*.py")
	cmd.Dir = testDir
	cmd.Env = append(os.Environ(), "RAYTPU_TEST_LAUNCHER_DIR="+launcherDir, "RAYTPU_TEST_REPLICA_DIR="+replicaDir,
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONWARNINGS=ignore", "RAY_ADDRESS=") // no test may reach a cluster
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -m unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("python -m unittest did not report OK:\n%s", out)
	}
	t.Logf("%s", out)
}
