// Package gobin builds the module's programs for the tests that run them
// as a user does (the raytpu command, the examples), with the flags go test
// built the test binary with: -race when it has the race detector. make
// test builds every package with -race (vet, then the tests), so a build
// with the same flags only links; one without would compile the whole
// dependency tree (client-go, KubeRay's API, gRPC, ...) a second time.
//
// The package is for tests only and imports nothing of raytpu.
package gobin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Flags are the go build flags that match this test binary's: -race when
// it was built with the race detector.
func Flags() []string {
	if race {
		return []string{"-race"}
	}
	return nil
}

// Build builds the program in package pkg (a pattern go build takes,
// relative to the test's directory, such as "." or "../examples/serve")
// into the file out and returns out. It first reads the program's source
// files (ReadSources), so that go test's result cache, which does not see
// what go build reads, cannot keep a pass past a change to them.
func Build(t testing.TB, out, pkg string) string {
	t.Helper()
	ReadSources(t, pkg)
	args := append([]string{"build"}, Flags()...)
	cmd := exec.CommandContext(t.Context(), "go", append(args, "-o", out, pkg)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// Install runs go install on package pkg with GOBIN set to dir, as a user
// installs a command, and returns the installed binary's path.
func Install(t testing.TB, dir, pkg string) string {
	t.Helper()
	ReadSources(t, pkg)
	args := append([]string{"install"}, Flags()...)
	cmd := exec.CommandContext(t.Context(), "go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", pkg, err, b)
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.Target}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return filepath.Join(dir, filepath.Base(strings.TrimSpace(string(out))))
}

// ReadSources reads every Go file of package pkg and of the module's
// packages it imports, for go test's result cache to see.
func ReadSources(t testing.TB, pkg string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps",
		"-f", `{{if not .Standard}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatalf("go list found no source files of %s", pkg)
	}
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}
