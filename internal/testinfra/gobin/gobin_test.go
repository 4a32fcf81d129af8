package gobin_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/gobin"
)

// A built program runs, and was built with the race detector exactly when
// this test binary was (go version -m reads the build settings back).
func TestBuildMatchesTheTestBinary(t *testing.T) {
	t.Parallel()
	bin := gobin.Build(t, filepath.Join(t.TempDir(), "hello"), "./testdata/hello")
	out, err := exec.Command(bin).Output()
	if err != nil || strings.TrimSpace(string(out)) != "hello from gobin" {
		t.Fatalf("hello: %q, %v", out, err)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	race := strings.Contains(string(info), "-race=true")
	if want := len(gobin.Flags()) > 0; race != want {
		t.Errorf("built with -race: %v, want %v (flags %v)\n%s", race, want, gobin.Flags(), info)
	}
}

func TestInstall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := gobin.Install(t, dir, "./testdata/hello")
	if bin != filepath.Join(dir, "hello") {
		t.Errorf("installed at %s, want %s", bin, filepath.Join(dir, "hello"))
	}
	if out, err := exec.Command(bin).Output(); err != nil || strings.TrimSpace(string(out)) != "hello from gobin" {
		t.Fatalf("installed hello: %q, %v", out, err)
	}
}
