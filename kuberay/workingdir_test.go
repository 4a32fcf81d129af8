package kuberay_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/kuberay"
)

// writeTree creates files (path -> content) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var codeTree = map[string]string{
	"train_loop.py":           "def train_func(config):\n    return config\n",
	"pkg/util.py":             "X = 1\n",
	"data/blob.bin":           "not shipped",
	".git/HEAD":               "ref: refs/heads/main\n",
	"pkg/__pycache__/u.pyc":   "bytecode",
	"venv/bin/python":         "#!",
	"notes/keep/readme.txt":   "kept",
	"notes/keep/scratch.bin":  "not shipped",
	"sub/.venv/lib/whatever":  "not shipped",
	"sub/train_loop_extra.py": "Y = 2\n",
}

func zipNames(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names
}

func TestPackWorkingDir(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, codeTree)
	wd, err := kuberay.PackWorkingDir(dir, []string{"*.bin"})
	if err != nil {
		t.Fatal(err)
	}
	// Files (and empty directories: none here) under one top-level
	// directory, as Ray zips a package.
	want := []string{
		"working_dir/notes/keep/readme.txt", "working_dir/pkg/util.py", "working_dir/sub/train_loop_extra.py",
		"working_dir/train_loop.py",
	}
	if got := zipNames(t, wd.Zip); !slices.Equal(got, want) {
		t.Errorf("zip entries\n%q\nwant\n%q", got, want)
	}
	again, err := kuberay.PackWorkingDir(dir, []string{"*.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wd.Zip, again.Zip) || wd.SHA256 != again.SHA256 {
		t.Error("two packs of one directory differ")
	}
	if !strings.HasPrefix(wd.URI(), "file://"+kuberay.WorkingDirMountPath+"/wd-") || !strings.HasSuffix(wd.URI(), ".zip") {
		t.Errorf("URI %s", wd.URI())
	}
	// Excludes are gitignore patterns, as runtime_env["excludes"]: an
	// unclosed "[" is a literal, a reversed range is an error.
	if _, err := kuberay.PackWorkingDir(dir, []string{"[bad"}); err != nil {
		t.Errorf("exclude pattern [bad: %v", err)
	}
	if _, err := kuberay.PackWorkingDir(dir, []string{"[z-a]"}); err == nil || !strings.Contains(err.Error(), "[z-a]") {
		t.Errorf("a malformed exclude pattern: %v", err)
	}
}

// Past the limit, the error names the limit and the size; incompressible
// bytes make the zip as large as the file.
func TestPackWorkingDirTooLarge(t *testing.T) {
	t.Parallel()
	big := make([]byte, kuberay.WorkingDirMaxSize+100)
	rand.Read(big)
	dir := writeTree(t, map[string]string{"weights.npy": string(big)})
	_, err := kuberay.PackWorkingDir(dir, nil)
	if !errors.Is(err, kuberay.ErrWorkingDirTooLarge) {
		t.Fatalf("PackWorkingDir = %v, want ErrWorkingDirTooLarge", err)
	}
	if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(kuberay.WorkingDirMaxSize)) || !strings.Contains(msg, "zips to ") {
		t.Errorf("error %q should name the limit %d and the size", msg, kuberay.WorkingDirMaxSize)
	}
}

// Ray itself fetches the zip through a file:// URI and unpacks it, dropping
// the top-level directory, into the working_dir the job runs in: the real
// Ray functions of the project's venv, with no cluster.
func TestPackedWorkingDirUnpacksInRay(t *testing.T) {
	t.Parallel()
	wd, err := kuberay.PackWorkingDir(writeTree(t, codeTree), []string{"*.bin"})
	if err != nil {
		t.Fatal(err)
	}
	out := unpackInRay(t, wd.Key(), wd.Zip, `
for root, _, files in os.walk(dest):
    for f in files:
        print(os.path.relpath(os.path.join(root, f), dest))
`)
	got := strings.Fields(out)
	slices.Sort(got)
	want := []string{"notes/keep/readme.txt", "pkg/util.py", "sub/train_loop_extra.py", "train_loop.py"}
	if !slices.Equal(got, want) {
		t.Errorf("Ray unpacked %q, want %q", got, want)
	}
}

// The packed replica runtime, fetched by Ray as a py_modules file:// URI,
// unpacks to a directory that holds raytpu_replica itself: a process
// with that directory on its path (as Ray puts every py_modules entry)
// imports the runtime the Ray backend ships.
func TestPackedReplicaRuntimeImportsInRay(t *testing.T) {
	t.Parallel()
	rt, err := kuberay.PackReplicaRuntime()
	if err != nil {
		t.Fatal(err)
	}
	out := unpackInRay(t, rt.Key(), rt.Zip, `
sys.path.insert(0, dest)
import raytpu_replica
print(raytpu_replica.__file__[len(dest):], callable(raytpu_replica.tpu_slice))
`)
	if got, want := strings.TrimSpace(out), "/raytpu_replica/__init__.py True"; got != want {
		t.Errorf("imported %q, want %q", got, want)
	}
}

// unpackInRay writes zip as file name and has the venv's Ray fetch and
// unpack its file:// URI with download_and_unpack_package, what a node's
// runtime_env agent runs for a working_dir or py_modules URI, then runs the
// Python code then (dest is the unpacked directory) and returns its output.
func unpackInRay(t *testing.T, name string, zip []byte, then string) string {
	t.Helper()
	py := venvtest.Python(t)
	tmp := t.TempDir()
	zipPath := filepath.Join(tmp, name)
	if err := os.WriteFile(zipPath, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import asyncio, os, sys
from ray._private.runtime_env.packaging import download_and_unpack_package
dest = asyncio.run(download_and_unpack_package(sys.argv[1], sys.argv[2]))
` + then
	uri := "file://" + zipPath
	cmd := exec.CommandContext(t.Context(), py, "-c", script, uri, filepath.Join(tmp, "unpacked"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Ray could not unpack %s: %v\n%s", uri, err, stderr.Bytes())
	}
	return string(out)
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
