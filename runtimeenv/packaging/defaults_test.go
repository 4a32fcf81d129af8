package packaging_test

import (
	"slices"
	"testing"

	"github.com/raytpu/raytpu/runtimeenv/packaging"
)

// TestDefaultExcludesIsACopy: changing the list DefaultExcludes returns
// changes neither a later call nor what a walk leaves out.
func TestDefaultExcludesIsACopy(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"a.py": "a", ".git/HEAD": "ref", "venv/lib.py": "v"})
	want := []string{".git", ".venv", "venv", "__pycache__"}
	got := packaging.DefaultExcludes()
	if !slices.Equal(got, want) {
		t.Fatalf("DefaultExcludes() = %q, want %q", got, want)
	}
	for i := range got {
		got[i] = "a.py"
	}
	if again := packaging.DefaultExcludes(); !slices.Equal(again, want) {
		t.Errorf("after changing a returned list, DefaultExcludes() = %q, want %q", again, want)
	}
	tree, err := packaging.Walk(dir, packaging.Options{MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if files := tree.Files(); !slices.Equal(files, []string{"a.py"}) {
		t.Errorf("walk after changing a returned list packs %q, want only a.py", files)
	}
}
