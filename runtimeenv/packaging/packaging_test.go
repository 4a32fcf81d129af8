package packaging_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/runtimeenv/packaging"
)

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

func zipOf(t *testing.T, dir string, o packaging.Options) ([]byte, *packaging.Zip, error) {
	t.Helper()
	tree, err := packaging.Walk(dir, o)
	if err != nil {
		return nil, nil, err
	}
	defer tree.Close()
	var buf bytes.Buffer
	z, err := tree.WriteZip(&buf, nil)
	return buf.Bytes(), z, err
}

func TestWalkOptions(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"a.py": "a"})
	tests := []struct {
		name string
		o    packaging.Options
		ok   bool
	}{
		{"no MaxSize", packaging.Options{}, false},
		{"negative MaxSize", packaging.Options{MaxSize: -1}, false},
		{"prefix without slash", packaging.Options{MaxSize: 1 << 20, Prefix: "wd"}, false},
		{"absolute prefix", packaging.Options{MaxSize: 1 << 20, Prefix: "/wd/"}, false},
		{"prefix leaving the zip", packaging.Options{MaxSize: 1 << 20, Prefix: "../wd/"}, false},
		{"extra with a slash", packaging.Options{MaxSize: 1 << 20, Extra: map[string][]byte{"a/b": nil}}, false},
		{"a prefix", packaging.Options{MaxSize: 1 << 20, Prefix: "working_dir/"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := packaging.Walk(dir, tt.o)
			if (err == nil) != tt.ok {
				t.Fatalf("Walk error %v, want ok=%v", err, tt.ok)
			}
			if tree != nil {
				tree.Close()
			}
		})
	}
	if _, err := packaging.Walk(filepath.Join(dir, "a.py"), packaging.Options{MaxSize: 1 << 20}); err == nil {
		t.Error("a file without AllowFile: no error")
	}
}

// With Modified set, the same files give the same zip bytes, every entry
// under Prefix.
func TestWriteZipReproducible(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.py": strings.Repeat("a = 1\n", 100), "pkg/b.py": "b", "pkg/c/d.txt": "d"}
	one, two := writeTree(t, files), writeTree(t, files)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(two, "a.py"), past, past)
	o := packaging.Options{MaxSize: 1 << 20, Prefix: "wd/", Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
	b1, z1, err := zipOf(t, one, o)
	if err != nil {
		t.Fatal(err)
	}
	b2, z2, err := zipOf(t, two, o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) || *z1 != *z2 {
		t.Error("the same files in two directories zip differently")
	}
	zr, err := zip.NewReader(bytes.NewReader(b1), int64(len(b1)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff([]string{"wd/a.py", "wd/pkg/b.py", "wd/pkg/c/d.txt"}, names); diff != "" {
		t.Errorf("zip names (-want +got):\n%s", diff)
	}
	if z1.Size != int64(len(b1)) || z1.Files != 3 || len(z1.Hash) != 16 {
		t.Errorf("Zip = %+v for %d bytes", z1, len(b1))
	}
}

// MaxSize is the largest zip accepted: a zip of exactly MaxSize bytes is
// written, one byte less fails with a *SizeError.
func TestMaxSizeIsTheLargestZip(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"a.txt": "0123456789"})
	_, z, err := zipOf(t, dir, packaging.Options{MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := zipOf(t, dir, packaging.Options{MaxSize: z.Size}); err != nil {
		t.Errorf("MaxSize = the zip's size %d: %v", z.Size, err)
	}
	_, _, err = zipOf(t, dir, packaging.Options{MaxSize: z.Size - 1})
	var se *packaging.SizeError
	if !errors.Is(err, packaging.ErrTooLarge) || !errors.As(err, &se) || se.Limit != z.Size-1 || se.Dir != dir {
		t.Errorf("MaxSize one byte short: %v, want a *SizeError for %s", err, dir)
	}
	_, _, err = zipOf(t, dir, packaging.Options{MaxSize: 9, Store: true})
	if !errors.As(err, &se) || !se.Files || se.Size != 10 {
		t.Errorf("stored files over the limit: %v, want a *SizeError on the files' 10 bytes", err)
	}
}

func TestFilesAndAllowFile(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"m/x.py": "x", "m/y/z.py": "z", "one.py": "1"})
	if err := os.Mkdir(filepath.Join(dir, "m", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := packaging.Walk(filepath.Join(dir, "m"), packaging.Options{MaxSize: 1 << 20, Extra: map[string][]byte{"cfg.json": []byte("{}")}})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if diff := cmp.Diff([]string{"empty/", "x.py", "y/z.py", "cfg.json"}, tree.Files()); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if tree.Size() != 4 {
		t.Errorf("Size = %d, want 4", tree.Size())
	}
	single, err := packaging.Walk(filepath.Join(dir, "one.py"), packaging.Options{MaxSize: 1 << 20, AllowFile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	if got := single.Files(); !slices.Equal(got, []string{"one.py"}) {
		t.Errorf("a single file: Files = %q", got)
	}
}
