package client_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lowLevel are the imports that code a user embeds must do without: speed
// that needs unsafe or raw system calls is not worth it (DESIGN.md).
var lowLevel = []string{"unsafe", "syscall", "golang.org/x/sys"}

// lowLevelImports lists the files in dir, test files aside and whatever
// their build constraints, that import a package of lowLevel, as
// "file: path" lines; files is how many Go files it read.
func lowLevelImports(t *testing.T, dir string) (bad []string, files int) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range lowLevel {
				if path == p || strings.HasPrefix(path, p+"/") {
					bad = append(bad, filepath.Base(name)+": "+path)
				}
			}
		}
	}
	return bad, files
}

func TestNoUnsafeOrSyscall(t *testing.T) {
	t.Parallel()
	bad, files := lowLevelImports(t, ".")
	if files < 3 {
		t.Fatalf("read only %d Go files of serve/client; the check would be vacuous", files)
	}
	for _, b := range bad {
		t.Errorf("%s: serve/client is embedded in users' programs; use the net package and grpc-go, not unsafe or raw system calls", b)
	}
}

func TestNoUnsafeOrSyscallCatchesViolations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"ok.go":         "package client\n\nimport (\n\t\"net\"\n\t\"os\"\n)\n",
		"raw_linux.go":  "//go:build linux\n\npackage client\n\nimport (\n\t\"syscall\"\n\tu \"unsafe\"\n)\n",
		"sys.go":        "package client\n\nimport \"golang.org/x/sys/unix\"\n",
		"sysish.go":     "package client\n\nimport \"golang.org/x/sysfoo\"\n",
		"raw_x_test.go": "package client\n\nimport \"unsafe\"\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, n := lowLevelImports(t, dir)
	if n != 4 {
		t.Errorf("read %d files, want 4 (test files skipped)", n)
	}
	want := map[string]bool{"raw_linux.go: syscall": true, "raw_linux.go: unsafe": true, "sys.go: golang.org/x/sys/unix": true}
	for _, b := range bad {
		if !want[b] {
			t.Errorf("flagged %q, want only %v", b, want)
		}
		delete(want, b)
	}
	for b := range want {
		t.Errorf("missed %q", b)
	}
}
