// Package golden compares test output with files under testdata, and
// rewrites them when the tests run with UPDATE_GOLDEN=1:
//
//	UPDATE_GOLDEN=1 go test ./...
//
// An environment variable, not a test flag: `go test ./... -update` fails in
// every package that does not define the flag, while the variable reaches
// every test binary and is ignored by those without golden files.
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// EnvUpdate is the environment variable that makes Assert rewrite files.
const EnvUpdate = "UPDATE_GOLDEN"

// Updating reports whether golden files are being rewritten.
func Updating() bool { return os.Getenv(EnvUpdate) == "1" }

// Assert compares got with testdata/<name>; with UPDATE_GOLDEN=1 it writes
// got there instead.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run UPDATE_GOLDEN=1 go test to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from golden (-want +got; rerun with UPDATE_GOLDEN=1 if intended):\n%s", path, diff)
	}
}
