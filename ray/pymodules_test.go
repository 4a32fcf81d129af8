package ray

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// TestPyModulePackagesMatchRay compares py_modules packages (a directory
// zipped under its own name without default excludes, and a single .py
// file) with Ray's Python code.
func TestPyModulePackagesMatchRay(t *testing.T) {
	t.Parallel()
	python := venvtest.Python(t)
	root := t.TempDir()
	mod := filepath.Join(root, "mymod")
	for p, c := range map[string]string{
		"__init__.py": "VALUE = 1\n", "sub/x.py": "X = 2\n", "__pycache__/c.pyc": "c",
		".git/HEAD": "ref", "notes.log": "log",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, p)), 0o755)
		os.WriteFile(filepath.Join(mod, p), []byte(c), 0o644)
	}
	single := filepath.Join(root, "single.py")
	os.WriteFile(single, []byte("Y = 3\n"), 0o644)
	excludes := []string{"*.log"}

	script := `
import json, sys, zipfile, tempfile
from pathlib import Path
from ray._private.runtime_env.packaging import get_uri_for_directory, get_uri_for_file, create_package
mod, single, ex = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {}
for path, is_dir in ((mod, True), (single, False)):
    uri = get_uri_for_directory(path, include_gitignore=True, excludes=ex) if is_dir else get_uri_for_file(path)
    with tempfile.TemporaryDirectory() as td:
        z = Path(td) / "p.zip"
        create_package(path, z, include_gitignore=True, include_parent_dir=is_dir, excludes=ex)
        zf = zipfile.ZipFile(z)
        out[path] = {"uri": uri, "files": {n: ("" if n.endswith("/") else zf.read(n).decode()) for n in zf.namelist()}}
print(json.dumps(out))
`
	ex, _ := json.Marshal(excludes)
	cmd := exec.Command(python, "-c", script, mod, single, string(ex))
	cmd.Dir = t.TempDir()
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want map[string]struct {
		URI   string            `json:"uri"`
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for path, opts := range map[string]PackageOptions{
		mod:    {Excludes: excludes, NoDefaultExcludes: true, includeParentDir: true},
		single: {NoDefaultExcludes: true, allowFile: true},
	} {
		pkg, err := PackageDir(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if pkg.URI != want[path].URI {
			t.Errorf("%s: URI %s, Ray says %s", path, pkg.URI, want[path].URI)
		}
		got := map[string]string{}
		zr, _ := zip.NewReader(bytes.NewReader(pkg.Bytes), pkg.Size)
		for _, f := range zr.File {
			rc, _ := f.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			got[f.Name] = string(data)
		}
		if diff := cmp.Diff(want[path].Files, got); diff != "" {
			t.Errorf("%s: zip (-ray +go):\n%s", path, diff)
		}
	}
	if _, err := PackageDir(single, PackageOptions{}); err == nil {
		t.Error("PackageDir(file) without allowFile: no error")
	}
}
