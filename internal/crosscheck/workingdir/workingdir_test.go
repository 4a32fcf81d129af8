//go:build unix

package workingdir_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv/packaging"
)

// writeTree creates files (path -> content; a path ending in "/" is an
// empty directory) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
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

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// shortDir is a new directory with a short path (a unix socket's path is
// limited to about 100 bytes).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "wd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// shipped is what one entry point makes of a directory: the files of its
// zip (path -> content, relative to the working_dir; an empty directory
// ends in "/") or its error.
type shipped struct {
	files map[string]string
	err   error
}

// entryPoint packs dir as one backend does.
type entryPoint struct {
	name string
	pack func(dir string, excludes []string) shipped
}

func unzip(b []byte, prefix string) (map[string]string, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range zr.File {
		name := strings.TrimPrefix(f.Name, prefix)
		if name == "" {
			name = "./" // the empty working_dir
		}
		if strings.HasSuffix(f.Name, "/") {
			out[name] = ""
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[name] = string(data)
	}
	return out, nil
}

var entryPoints = []entryPoint{
	{"ray.PackageDir", func(dir string, excludes []string) shipped {
		pkg, err := ray.PackageDir(dir, ray.PackageOptions{Excludes: excludes})
		if err != nil {
			return shipped{err: err}
		}
		files, err := unzip(pkg.Bytes, "")
		return shipped{files: files, err: err}
	}},
	{"ray.HashDir", func(dir string, excludes []string) shipped {
		// HashDir ships nothing: it must refuse what PackageDir refuses.
		_, err := ray.HashDir(dir, ray.PackageOptions{Excludes: excludes})
		return shipped{err: err}
	}},
	{"kuberay.PackWorkingDir", func(dir string, excludes []string) shipped {
		wd, err := kuberay.PackWorkingDir(dir, excludes)
		if err != nil {
			return shipped{err: err}
		}
		files, err := unzip(wd.Zip, "working_dir/")
		return shipped{files: files, err: err}
	}},
}

// packAll runs every entry point on dir, each bounded in time so that a
// packager that loops or blocks on a file fails the test instead of
// hanging it; unblock, when not nil, is called if one does not return.
func packAll(t *testing.T, dir string, excludes []string, unblock func()) map[string]shipped {
	t.Helper()
	out := map[string]shipped{}
	for _, ep := range entryPoints {
		done := make(chan shipped, 1)
		go func() { done <- ep.pack(dir, excludes) }()
		select {
		case s := <-done:
			out[ep.name] = s
		case <-time.After(2 * time.Minute):
			if unblock != nil {
				unblock()
			}
			t.Fatalf("%s on %s did not return: it loops, or it opened a file it must not open", ep.name, dir)
		}
	}
	return out
}

// TestSameRefusal: every entry point refuses the tree with the very same
// error, naming what it must name.
func TestSameRefusal(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret": "TOP SECRET"})
	secret := filepath.Join(outside, "secret")
	tests := []struct {
		name string
		// setup builds the tree in dir and returns what the error must
		// name.
		setup func(t *testing.T, dir string) []string
		is    error
		// exclude, when set, leaves the offending path out: then the tree
		// ships (an ignore file is read even when excluded, as Ray reads
		// it, so that case has none).
		exclude []string
	}{
		{"the issue's snippet: a file link out", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "innocent.txt")
			symlink(t, secret, link)
			return []string{link, secret, "points outside"}
		}, packaging.ErrOutside, []string{"/innocent.txt"}},
		{"a directory link out", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "sub", "data")
			symlink(t, outside, link)
			return []string{link, outside, "points outside"}
		}, packaging.ErrOutside, []string{"/sub"}},
		{"a relative link out", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "rel")
			rel, err := filepath.Rel(dir, secret)
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, link)
			return []string{link, secret, "points outside"}
		}, packaging.ErrOutside, []string{"/rel"}},
		{"a dangling link out", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "gone")
			symlink(t, filepath.Join(outside, "nothing-here"), link)
			return []string{link, filepath.Join(outside, "nothing-here"), "points outside"}
		}, packaging.ErrOutside, []string{"/gone"}},
		{"an in-tree link to a link out", func(t *testing.T, dir string) []string {
			symlink(t, secret, filepath.Join(dir, "b"))
			symlink(t, "b", filepath.Join(dir, "a"))
			return []string{filepath.Join(dir, "a"), secret, "points outside"}
		}, packaging.ErrOutside, []string{"/a", "/b"}},
		{"a .gitignore that is a link out", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, ".gitignore")
			symlink(t, secret, link)
			return []string{link, secret, "points outside"}
		}, packaging.ErrOutside, nil},
		{"a loop back to the root", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "sub", "up")
			symlink(t, "..", link)
			return []string{link, "loop"}
		}, packaging.ErrLoop, []string{"/sub"}},
		{"a loop through two links", func(t *testing.T, dir string) []string {
			writeTree(t, dir, map[string]string{"x/y/": ""})
			symlink(t, "../../x", filepath.Join(dir, "x", "y", "back"))
			return []string{filepath.Join(dir, "x", "y", "back"), "loop"}
		}, packaging.ErrLoop, []string{"/x"}},
		{"a FIFO", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "sub", "pipe")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{p, "named pipe"}
		}, packaging.ErrNotRegular, []string{"/sub"}},
		{"a link to a FIFO in the tree", func(t *testing.T, dir string) []string {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, "pipe", filepath.Join(dir, "a-link"))
			return []string{filepath.Join(dir, "a-link"), "named pipe"}
		}, packaging.ErrNotRegular, []string{"/pipe", "/a-link"}},
		{"a unix socket", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "s")
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return []string{p, "socket"}
		}, packaging.ErrNotRegular, []string{"/s"}},
		{"a device file", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "null")
			// /dev/null's numbers (1, 3); making one needs CAP_MKNOD.
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("cannot make a device file here (needs CAP_MKNOD): %v", err)
			}
			return []string{p, "character device"}
		}, packaging.ErrNotRegular, []string{"/null"}},
		{"a device (a link to /dev/null, outside)", func(t *testing.T, dir string) []string {
			link := filepath.Join(dir, "null")
			symlink(t, "/dev/null", link)
			return []string{link, "points outside"}
		}, packaging.ErrOutside, []string{"/null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := shortDir(t)
			writeTree(t, dir, map[string]string{"train.py": "print(1)\n"})
			names := tt.setup(t, dir)
			got := packAll(t, dir, nil, nil)
			first := got[entryPoints[0].name].err
			for _, ep := range entryPoints {
				err := got[ep.name].err
				if !errors.Is(err, tt.is) {
					t.Errorf("%s: error %v, want one matching %v", ep.name, err, tt.is)
					continue
				}
				if err.Error() != first.Error() {
					t.Errorf("%s: error\n%v\nwant the same as %s:\n%v", ep.name, err, entryPoints[0].name, first)
				}
				for _, n := range names {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("%s: error %q does not name %q", ep.name, err, n)
					}
				}
				if strings.Contains(err.Error(), "TOP SECRET") {
					t.Errorf("%s: error %q holds the outside file's content", ep.name, err)
				}
			}
			// Excluded, the same path is never looked at, and the tree
			// ships on every backend.
			if tt.exclude == nil {
				return
			}
			for name, s := range packAll(t, dir, tt.exclude, nil) {
				if s.err != nil {
					t.Errorf("%s with %q excluded: %v", name, tt.exclude, s.err)
				}
			}
		})
	}
}

// TestOutsideFileNeverOpened: a link to a file outside the tree is refused
// before anything opens the file. The outside file is a FIFO with no
// writer, so opening it to read would block the packager for good; and a
// file of mode 000, which an unprivileged packager could not read (it
// would fail with "permission denied", not with the refusal).
func TestOutsideFileNeverOpened(t *testing.T) {
	t.Parallel()
	outside := shortDir(t)
	fifo := filepath.Join(outside, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(outside, "locked")
	if err := os.WriteFile(locked, []byte("TOP SECRET"), 0o000); err != nil {
		t.Fatal(err)
	}
	// unblock releases a packager that opened the FIFO to read.
	unblock := func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"a file link to an outside FIFO", func(t *testing.T, dir string) { symlink(t, fifo, filepath.Join(dir, "data.txt")) }},
		{"a .rayignore link to an outside FIFO", func(t *testing.T, dir string) { symlink(t, fifo, filepath.Join(dir, ".rayignore")) }},
		{"a .gitignore link to an outside FIFO, below", func(t *testing.T, dir string) { symlink(t, fifo, filepath.Join(dir, "pkg", ".gitignore")) }},
		{"a file link to an outside mode-000 file", func(t *testing.T, dir string) { symlink(t, locked, filepath.Join(dir, "data.txt")) }},
		{"a directory link to the outside directory", func(t *testing.T, dir string) { symlink(t, outside, filepath.Join(dir, "pkg", "out")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"train.py": "print(1)\n", "pkg/util.py": "X = 1\n"})
			tt.setup(t, dir)
			for name, s := range packAll(t, dir, nil, unblock) {
				if !errors.Is(s.err, packaging.ErrOutside) || errors.Is(s.err, fs.ErrPermission) {
					t.Errorf("%s: error %v, want the refusal of the link (ErrOutside), before any read", name, s.err)
				}
			}
		})
	}
}

// TestSameFilesShipped: trees with ignore files, excludes and links that
// stay inside ship the same files, with the same content, on both
// backends.
func TestSameFilesShipped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		links    map[string]string // link -> target (relative to the link)
		excludes []string
		want     []string // the files shipped, sorted
	}{
		{
			name: "ignore files and excludes",
			files: map[string]string{
				"train.py":            "print(1)\n",
				".gitignore":          "*.log\n!keep.log\n/top-only.txt\n",
				".rayignore":          "secrets/\n",
				"secrets/key":         "k",
				"logs/a.log":          "a",
				"logs/keep.log":       "keep",
				"top-only.txt":        "top",
				"sub/top-only.txt":    "kept below the top",
				"sub/.gitignore":      "*.tmp\n",
				"sub/x.tmp":           "tmp",
				"sub/y.py":            "y",
				"data/big.bin":        "big",
				"data/nested/c.bin":   "c",
				".git/HEAD":           "ref",
				"pkg/__pycache__/u.c": "pyc",
				"venv/bin/python":     "#!",
				"nested/.venv/x":      "x",
				"nested/keep/venv.py": "kept",
				"empty/":              "",
				"q/a?c.md":            "qmark",
				"q/abc.md":            "md",
			},
			excludes: []string{"data/", "q/a[!x]c.md"},
			want: []string{".gitignore", ".rayignore", "empty/", "logs/keep.log", "nested/keep/venv.py",
				"sub/.gitignore", "sub/top-only.txt", "sub/y.py", "train.py"},
		},
		{
			name:  "links that stay inside",
			files: map[string]string{"a.txt": "alpha", "b/d/e.py": "x = 1\n", "b/c.txt": "charlie"},
			links: map[string]string{"link.txt": "a.txt", "linkdir": "b/d", "b/up-a": "../a.txt", "dangling": "no-such-file"},
			want:  []string{"a.txt", "b/c.txt", "b/d/e.py", "b/up-a", "link.txt", "linkdir/e.py"},
		},
		{
			name:  "a self-loop link is dangling: it ends and ships nothing",
			files: map[string]string{"a.txt": "alpha"},
			links: map[string]string{"self": "self", "ping": "pong", "pong": "ping"},
			want:  []string{"a.txt"},
		},
		{
			name:  "an empty working_dir",
			files: map[string]string{},
			want:  []string{"./"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			for link, target := range tt.links {
				symlink(t, target, filepath.Join(dir, filepath.FromSlash(link)))
			}
			got := packAll(t, dir, tt.excludes, nil)
			ref := got["ray.PackageDir"]
			if ref.err != nil {
				t.Fatalf("ray.PackageDir: %v", ref.err)
			}
			if diff := cmp.Diff(tt.want, slices.Sorted(maps.Keys(ref.files))); diff != "" {
				t.Errorf("ray.PackageDir shipped (-want +got):\n%s", diff)
			}
			for name, s := range got {
				if s.err != nil {
					t.Errorf("%s: %v", name, s.err)
					continue
				}
				if s.files == nil {
					continue // HashDir
				}
				if diff := cmp.Diff(ref.files, s.files); diff != "" {
					t.Errorf("%s ships other files than ray.PackageDir (-ray +%s):\n%s", name, name, diff)
				}
			}
			// The packager's own listing is the same list.
			tree, err := packaging.Walk(dir, packaging.Options{Excludes: tt.excludes, MaxSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer tree.Close()
			if diff := cmp.Diff(tt.want, slices.Sorted(slices.Values(tree.Files()))); diff != "" {
				t.Errorf("packaging.Walk Files (-want +got):\n%s", diff)
			}
		})
	}
}
