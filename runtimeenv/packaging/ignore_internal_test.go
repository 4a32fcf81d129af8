package packaging

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

var specCases = [][]string{
	{"*.py"}, {"foo"}, {"foo/"}, {"/foo"}, {"foo/bar"}, {"foo/**"}, {"**/foo"}, {"a/**/b"},
	{"**"}, {"*"}, {"?.txt"}, {"[abc].txt"}, {"[!abc].txt"}, {"[a-c]*"}, {`\#x`}, {`\!x`},
	{"!x"}, {"dir/*.txt"}, {"d*/"}, {"*.tar.gz"}, {"a b"}, {"**/"}, {"foo/*/bar"}, {"/"},
	{"#c"}, {""}, {".*"}, {"x/"}, {"a["}, {"[]]x"}, {"[^a]x"}, {`a\*b`}, {"  foo  "},
	{"*.log", "!keep.log"}, {"dir/", "!dir/keep"}, {"*", "!*.txt"}, {"/a/b/"}, {"a/b/"},
	{"**/x/**"}, {"x/**/"}, {"*/"}, {"*/*"}, {"ünï*"},
}

var specPaths = []string{
	".", "foo", "foo/bar", "x/foo", "x/foo/bar", "a.py", "dir/a.py", "a/b", "a/x/y/b",
	"a/x/b/c", "foo.txt", "a.txt", "d.txt", "ab.txt", "#x", "!x", "x", "dir/x.txt",
	"dir/sub/x.txt", "dd/file", "f.tar.gz", "a b", ".hidden", "x/y", "]x", "bx", "a*b",
	"axb", "[.txt", "keep.log", "y.log", "dir/keep", "a/b/c", "ünïcode", "q/x/z", "foo/x/bar",
}

// TestPathSpecMatchesRay checks every pattern and path above against Ray's
// vendored pathspec (the code behind runtime_env excludes, .gitignore and
// .rayignore).
func TestPathSpecMatchesRay(t *testing.T) {
	t.Parallel()
	py := venvPython(t)
	in, _ := json.Marshal(map[string]any{"specs": specCases, "paths": specPaths})
	script := `
import json, sys
from ray._private.thirdparty.pathspec import PathSpec
d = json.loads(sys.stdin.read())
out = []
for lines in d["specs"]:
    spec = PathSpec.from_lines("gitwildmatch", lines)
    out.append([spec.match_file(p) for p in d["paths"]])
print(json.dumps(out))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Stdin = bytesReader(in)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want [][]bool
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for i, lines := range specCases {
		spec, err := compileSpec("", lines)
		if err != nil {
			t.Errorf("compileSpec(%q): %v", lines, err)
			continue
		}
		for j, p := range specPaths {
			if got := spec.match(p); got != want[i][j] {
				t.Errorf("spec %q, path %q: match = %v, Ray says %v", lines, p, got, want[i][j])
			}
		}
	}
}

func TestPathSpecBase(t *testing.T) {
	t.Parallel()
	spec, err := compileSpec("sub/dir", []string{"*.tmp", "/top"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"sub/dir/a.tmp": true, "sub/dir/x/a.tmp": true, "a.tmp": false, "sub/a.tmp": false,
		"sub/dir/top": true, "sub/dir/x/top": false, "sub/dirx/a.tmp": false,
	} {
		if got := spec.match(p); got != want {
			t.Errorf("match(%q) = %v, want %v", p, got, want)
		}
	}
}

func FuzzWildmatch(f *testing.F) {
	for _, c := range specCases {
		for _, p := range specPaths[:5] {
			f.Add(c[0], p)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		re, _, ok := wildmatchRegex(pattern)
		if !ok {
			return
		}
		// The translation may produce a regexp RE2 rejects (Python's re
		// would raise too); compileSpec reports that as an error. It must
		// never panic.
		if c, err := regexp.Compile(re); err == nil {
			c.MatchString(path)
		}
		if spec, err := compileSpec("", []string{pattern}); err == nil {
			spec.match(path)
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// venvPython is the project virtualenv's interpreter: $RAYTPU_VENV, else
// .venv at the repository's root. (runtimeenv imports nothing of
// internal/, so internal/testinfra/venvtest is out of reach.)
func venvPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("RAYTPU_VENV")
	if venv == "" {
		venv = filepath.Join("..", "..", ".venv")
	}
	py, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err == nil {
		_, err = os.Stat(py)
	}
	if err != nil {
		t.Fatalf("this test needs Ray 2.60 in the project virtualenv: run scripts/setup-venv.sh (or make test), or set RAYTPU_VENV: %v", err)
	}
	return py
}
