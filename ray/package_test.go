package ray_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/ray"
)

// writeTree creates files (path -> content; a path ending in "/" is an
// empty directory) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// richTree exercises excludes, negation, anchored patterns, directory
// patterns, nested .gitignore, .rayignore, default excludes, empty
// directories, odd names and symlinks that stay inside the tree.
func richTree(t testing.TB) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.py":             "print('hi')\n",
		"a.txt":               "alpha",
		"b/c.txt":             "charlie",
		"b/d/e.py":            "x = 1\n",
		"b/.gitignore":        "*.tmp\n# comment\n\n",
		"b/f.tmp":             "tmp",
		"b/g/h.tmp":           "tmp2",
		"empty/":              "",
		"b/emptier/":          "",
		".git/config":         "[core]",
		"sub/__pycache__/x":   "pyc",
		"logs/x.log":          "log",
		"logs/keep.log":       "keep",
		"data/big.bin":        "0123456789",
		"data/nested/y.bin":   "y",
		".rayignore":          "secret.txt\n",
		"secret.txt":          "s3cr3t",
		"deep/secret.txt":     "s3cr3t2",
		"top-only.txt":        "top",
		"sub/top-only.txt":    "not top",
		"ünï cödé.txt":        "utf8",
		"sp ace/f[1].txt":     "brackets",
		"q/abc.md":            "md",
		"q/a?c.md":            "qmark",
		"venv/lib/site.py":    "venv",
		"nested/venv/x.py":    "also excluded",
		"nested/.venv/y.py":   "also excluded",
		"nested/keep/venv.py": "kept",
	})
	if err := os.Symlink("a.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b/d", filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	return dir
}

var richExcludes = []string{"*.log", "!keep.log", "data/", "/top-only.txt", "q/a[!x]c.md"}

// pythonPackage asks Ray's own Python code for the URI and zip listing of
// dir.
func pythonPackage(t *testing.T, dir string, excludes []string) (uri string, files map[string]string) {
	t.Helper()
	ex, _ := json.Marshal(excludes)
	out := filepath.Join(t.TempDir(), "py.zip")
	script := `
import json, sys, zipfile
from pathlib import Path
from ray._private import ray_constants
from ray._private.runtime_env.packaging import get_uri_for_directory, create_package
d, ex, out = sys.argv[1], json.loads(sys.argv[2]) or [], sys.argv[3]
ex = ray_constants.get_runtime_env_default_excludes() + ex
uri = get_uri_for_directory(d, include_gitignore=True, excludes=ex)
create_package(d, Path(out), include_gitignore=True, excludes=ex)
z = zipfile.ZipFile(out)
files = {}
for n in z.namelist():
    files[n] = "" if n.endswith("/") else z.read(n).decode("utf-8")
print(json.dumps({"uri": uri, "files": files}))
`
	cmd := exec.Command(venvPython(t), "-c", script, dir, string(ex), out)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "RAY_USAGE_STATS_ENABLED=0")
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("python: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("python: %v", err)
	}
	var res struct {
		URI   string            `json:"uri"`
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("python output %q: %v", b, err)
	}
	return res.URI, res.Files
}

func zipFiles(t testing.TB, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			files[f.Name] = ""
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name] = string(data)
	}
	return files
}

// TestPackageMatchesPython checks that PackageDir and HashDir give the
// same URI and the same zip content as Ray's Python client.
func TestPackageMatchesPython(t *testing.T) {
	t.Parallel()
	rich := richTree(t)
	plain := t.TempDir()
	writeTree(t, plain, map[string]string{"run.py": "print(1)\n"})
	emptyDir := t.TempDir()
	starDir := t.TempDir()
	writeTree(t, starDir, map[string]string{"x/.gitignore": "*\n", "x/y.txt": "y", "z.txt": "z"})

	tests := []struct {
		name     string
		dir      string
		excludes []string
		store    bool
	}{
		{"rich", rich, richExcludes, false},
		{"rich stored", rich, richExcludes, true},
		{"rich no excludes", rich, nil, false},
		{"plain", plain, nil, false},
		{"empty", emptyDir, nil, false},
		{"gitignore star excludes its own dir", starDir, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantURI, wantFiles := pythonPackage(t, tt.dir, tt.excludes)
			opts := ray.PackageOptions{Excludes: tt.excludes, Store: tt.store}
			pkg, err := ray.PackageDir(tt.dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if pkg.URI != wantURI {
				t.Errorf("PackageDir URI = %s, Python says %s", pkg.URI, wantURI)
			}
			uri, err := ray.HashDir(tt.dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if uri != wantURI {
				t.Errorf("HashDir URI = %s, Python says %s", uri, wantURI)
			}
			got := zipFiles(t, pkg.Bytes)
			if diff := cmp.Diff(wantFiles, got); diff != "" {
				t.Errorf("zip content (-python +go):\n%s", diff)
			}
			if pkg.Files != len(got) || pkg.Size != int64(len(pkg.Bytes)) {
				t.Errorf("Files, Size = %d, %d; zip has %d entries, %d bytes", pkg.Files, pkg.Size, len(got), len(pkg.Bytes))
			}
		})
	}
}

// TestPackageExtra checks that Extra files hash as if they were in the
// directory, and replace a file of the same name.
func TestPackageExtra(t *testing.T) {
	t.Parallel()
	base := map[string]string{"main.py": "print(1)\n", "launch.py": "old"}
	withExtra := t.TempDir()
	writeTree(t, withExtra, base)
	physical := t.TempDir()
	writeTree(t, physical, map[string]string{"main.py": "print(1)\n", "launch.py": "new launcher", "cfg.json": "{}"})

	pkg, err := ray.PackageDir(withExtra, ray.PackageOptions{Extra: map[string][]byte{
		"launch.py": []byte("new launcher"), "cfg.json": []byte("{}"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantURI, wantFiles := pythonPackage(t, physical, nil)
	if pkg.URI != wantURI {
		t.Errorf("URI with Extra = %s, want the physical directory's %s", pkg.URI, wantURI)
	}
	if diff := cmp.Diff(wantFiles, zipFiles(t, pkg.Bytes)); diff != "" {
		t.Errorf("zip content (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "a/b", "..", "."} {
		if _, err := ray.PackageDir(withExtra, ray.PackageOptions{Extra: map[string][]byte{bad: nil}}); err == nil {
			t.Errorf("Extra name %q: no error", bad)
		}
	}
}

func TestPackageRefusesOutsideSymlinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret": "x"})
	tests := []struct{ name, target string }{
		{"file", filepath.Join(outside, "secret")},
		{"dir", outside},
		{"relative", "../../" + filepath.Base(outside) + "/secret"},
		{"dangling", filepath.Join(outside, "nothing-here")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"ok.txt": "ok"})
			if tt.name == "relative" {
				// Make "../<outside>" resolve: put dir next to outside.
				dir = filepath.Join(filepath.Dir(outside), "pkg-"+filepath.Base(outside))
				writeTree(t, dir, map[string]string{"ok.txt": "ok"})
				t.Cleanup(func() { os.RemoveAll(dir) })
			}
			link := filepath.Join(dir, "sub", "evil")
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(tt.target, link); err != nil {
				t.Fatal(err)
			}
			for name, f := range map[string]func() error{
				"PackageDir": func() error { _, err := ray.PackageDir(dir, ray.PackageOptions{}); return err },
				"HashDir":    func() error { _, err := ray.HashDir(dir, ray.PackageOptions{}); return err },
			} {
				err := f()
				if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "outside") {
					t.Errorf("%s: error %v, want one naming %s as pointing outside", name, err, link)
				}
			}
			// An excluded link is never looked at.
			if _, err := ray.PackageDir(dir, ray.PackageOptions{Excludes: []string{"evil"}}); err != nil {
				t.Errorf("excluded link: %v", err)
			}
		})
	}
}

func TestPackageSizeLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noise := make([]byte, 8192)
	rand.Read(noise)
	writeTree(t, dir, map[string]string{"a.bin": string(noise[:4096]), "b.bin": string(noise[4096:])})
	for _, store := range []bool{false, true} {
		_, err := ray.PackageDir(dir, ray.PackageOptions{MaxSize: 1000, Store: store})
		if err == nil || !strings.Contains(err.Error(), "limit of 1000 bytes") {
			t.Errorf("store=%v: error %v, want one naming the 1000-byte limit", store, err)
		}
	}
	if _, err := ray.PackageDir(dir, ray.PackageOptions{MaxSize: ray.GCSStorageMaxSize}); err == nil {
		t.Error("MaxSize at GCS limit: no error")
	}
}

func TestPackageDeterministic(t *testing.T) {
	t.Parallel()
	dir := richTree(t)
	a, err := ray.PackageDir(dir, ray.PackageOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ray.PackageDir(dir, ray.PackageOptions{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if a.URI != b.URI || !bytes.Equal(a.Bytes, b.Bytes) {
		t.Errorf("1 and 8 workers differ: %s (%d bytes) vs %s (%d bytes)", a.URI, a.Size, b.URI, b.Size)
	}
}

// TestPackageLargeFiles covers files streamed by the writer (>= 8 MiB).
func TestPackageLargeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 9<<20/16)
	writeTree(t, dir, map[string]string{"small.txt": "s", "big.bin": string(big)})
	wantURI, _ := pythonPackage(t, dir, nil)
	pkg, err := ray.PackageDir(dir, ray.PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.URI != wantURI {
		t.Errorf("URI = %s, Python says %s", pkg.URI, wantURI)
	}
	files := zipFiles(t, pkg.Bytes)
	if files["big.bin"] != string(big) || files["small.txt"] != "s" {
		t.Errorf("zip content wrong: %d entries", len(files))
	}
	if pkg.Size > int64(len(big))/10 {
		t.Errorf("compressible 9 MiB file packaged into %d bytes", pkg.Size)
	}
}

func ExampleHashDir() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.py"), []byte("print('hello')\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "__pycache__"), 0o755) // excluded by default
	os.WriteFile(filepath.Join(dir, "__pycache__", "main.pyc"), []byte{0}, 0o644)

	uri, err := ray.HashDir(dir, ray.PackageOptions{})
	if err != nil {
		panic(err)
	}
	// The same URI as Ray's Python client gives the directory.
	fmt.Println(uri)
	// Output: gcs://_ray_pkg_ed19bab89378ed8a.zip
}

func ExamplePackageDir() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.py"), []byte("print('hello')\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "debug.log"), []byte("noise"), 0o644)

	pkg, err := ray.PackageDir(dir, ray.PackageOptions{
		Excludes: []string{"*.log"},
		// A launcher added at the zip root without touching the directory.
		Extra: map[string][]byte{"launch.py": []byte("import main\n")},
	})
	if err != nil {
		panic(err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(pkg.Bytes), pkg.Size)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	fmt.Println(pkg.URI)
	fmt.Println(pkg.Files, names)
	// Output:
	// gcs://_ray_pkg_d4f01794b4831724.zip
	// 2 [launch.py main.py]
}
