package rayruntime_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/rayruntime"
)

// The written package holds the embedded files, byte for byte, under the
// directory Python imports.
func TestWriteModule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pkg, err := rayruntime.WriteModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pkg != filepath.Join(dir, rayruntime.ModuleName) {
		t.Errorf("package dir %s, want %s", pkg, filepath.Join(dir, rayruntime.ModuleName))
	}
	files := rayruntime.ModuleFiles()
	for _, want := range []string{"__init__.py", rayruntime.RuntimeFile, rayruntime.ProtocolFile} {
		if _, ok := files[rayruntime.ModuleName+"/"+want]; !ok {
			t.Errorf("the module lacks %s", want)
		}
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s: written (%d bytes) differs from the embedded one (%d bytes)", name, len(got), len(want))
		}
	}
	entries, err := os.ReadDir(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("the package holds %d files, want the %d of ModuleFiles", len(entries), len(files))
	}
}

// SliceGroupName is the name the replica runtime gives its placement group.
func TestSliceGroupName(t *testing.T) {
	t.Parallel()
	if got, want := rayruntime.SliceGroupName("app", "dep", "r1"), "raytpu-slice:app:dep:r1"; got != want {
		t.Errorf("SliceGroupName = %q, want %q", got, want)
	}
}
