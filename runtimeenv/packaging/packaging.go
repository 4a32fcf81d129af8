package packaging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// DefaultExcludes returns the patterns Ray's clients always add to a
// working dir's excludes (RAY_RUNTIME_ENV_DEFAULT_EXCLUDES in Ray 2.60), in
// a fresh slice: a caller changing it changes no walk.
func DefaultExcludes() []string { return slices.Clone(defaultExcludes) }

var defaultExcludes = []string{".git", ".venv", "venv", "__pycache__"}

// Errors a walk or a zip matches with errors.Is.
var (
	// ErrOutside: a symbolic link (or an ignore file that is one) leads
	// out of the directory.
	ErrOutside = errors.New("points outside the directory")
	// ErrLoop: a symbolic link leads back to a directory that contains it.
	ErrLoop = errors.New("symlink loop")
	// ErrNotRegular: a named pipe, socket or device file.
	ErrNotRegular = errors.New("not a regular file or directory")
	// ErrTooLarge: the package is over Options.MaxSize (a *SizeError).
	ErrTooLarge = errors.New("package too large")
)

// Options configures Walk and what Tree.Hash and Tree.WriteZip make of the
// files.
type Options struct {
	// Excludes are gitignore-style patterns relative to the directory, as
	// in runtime_env["excludes"]; DefaultExcludes are added unless
	// NoDefaultExcludes. .gitignore files (unless IgnoreGitignore) and
	// .rayignore files in every directory apply below that directory, as
	// with Ray's Python client.
	Excludes          []string
	NoDefaultExcludes bool
	IgnoreGitignore   bool
	// Extra adds files at the zip's root (names without "/"), replacing a
	// file of the same name. They count in the hash as if they were in the
	// directory.
	Extra map[string][]byte
	// MaxSize is the largest zip accepted, in bytes: writing the byte
	// after it fails with a *SizeError. Required (> 0).
	MaxSize int64
	// Store writes files uncompressed, as Ray's Python client does.
	// Default: deflate (fast level), per file, in parallel.
	Store bool
	// Workers is how many files are read, hashed and compressed at once.
	// Default runtime.GOMAXPROCS(0).
	Workers int
	// Prefix goes before every name in the zip: "" or a directory name
	// ending in "/" (Ray's py_modules use the directory's own name; a zip
	// that Ray fetches from a URI needs one top-level directory).
	Prefix string
	// AllowFile accepts a single regular file instead of a directory (a
	// .py py_module): the package holds just that file.
	AllowFile bool
	// Modified, when set, is the time of every zip entry, so that the same
	// files give the same zip bytes. Default: each file's mtime (as Ray).
	Modified time.Time
}

func (o *Options) normalize() error {
	if o.MaxSize <= 0 {
		return fmt.Errorf("packaging: Options.MaxSize %d must be positive", o.MaxSize)
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Prefix != "" && (!strings.HasSuffix(o.Prefix, "/") || strings.HasPrefix(o.Prefix, "/") || strings.Contains(o.Prefix, "..")) {
		return fmt.Errorf("packaging: Options.Prefix %q: want a relative directory name ending in \"/\"", o.Prefix)
	}
	for name := range o.Extra {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("packaging: Options.Extra: bad file name %q: want a plain name at the zip root", name)
		}
	}
	return nil
}

// Tree is what Walk found in a directory: the files and empty directories
// a package of it holds, in zip order. It keeps the directory open (files
// are read through an os.Root of it, so nothing outside it is ever opened)
// until Close.
//
// Only Walk makes a usable Tree: on a nil or zero *Tree, Hash and WriteZip
// return an error naming Walk, Files is nil, Size 0 and Close nil.
type Tree struct {
	dir     string
	opts    Options
	root    *os.Root // nil for a single file (Options.AllowFile)
	entries []entry
	total   int64
}

// errNoTree is the error of a nil or zero *Tree (one Walk did not make).
var errNoTree = errors.New("packaging: nil or zero *Tree: use packaging.Walk")

// usable reports whether t was made by Walk (which always sets a positive
// MaxSize).
func (t *Tree) usable() bool { return t != nil && t.opts.MaxSize > 0 }

// Close releases the directory.
func (t *Tree) Close() error {
	if t == nil || t.root == nil {
		return nil
	}
	return t.root.Close()
}

// Files lists the slash-separated paths a package of the tree holds, in
// zip order, without Options.Prefix: files, Extra files, and empty
// directories (with a trailing "/"; an empty tree is "./").
func (t *Tree) Files() []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, e := range t.entries {
		switch {
		case e.dir && e.empty && e.rel == ".":
			out = append(out, "./")
		case e.dir && e.empty:
			out = append(out, e.rel+"/")
		case e.dir || e.special:
		default:
			out = append(out, e.rel)
		}
	}
	return out
}

// Size is the bytes of all the files (before zipping).
func (t *Tree) Size() int64 {
	if t == nil {
		return 0
	}
	return t.total
}

// open opens an entry's file: through the root, or the single file.
func (t *Tree) open(e *entry) (io.ReadCloser, error) {
	if t.root == nil {
		return os.Open(e.src)
	}
	return t.root.Open(e.src)
}

func (t *Tree) readFile(e *entry) ([]byte, error) {
	if t.root == nil {
		return os.ReadFile(e.src)
	}
	return t.root.ReadFile(e.src)
}

// Zip describes a zip WriteZip wrote.
type Zip struct {
	// Hash is Ray's content hash of the files: 16 hex digits.
	Hash string
	// Size is the zip's length in bytes.
	Size int64
	// Files counts the zip entries (files and empty directories).
	Files int
}

// URI is the gcs:// URI Ray gives a package of this hash:
// "gcs://_ray_pkg_<hash>.zip".
func URI(hash string) string { return "gcs://" + PackageName(hash) }

// PackageName is the name Ray gives a package of this hash,
// "_ray_pkg_<hash>.zip": the object name of a package uploaded elsewhere
// (a Cloud Storage bucket), content-addressed as Ray's own.
func PackageName(hash string) string { return "_ray_pkg_" + hash + ".zip" }

// SizeError is a package over its limit. It matches ErrTooLarge.
type SizeError struct {
	// Dir is the directory packaged.
	Dir string
	// Size is how large the zip was about to become, or, with Files, what
	// the files add up to before zipping.
	Size  int64
	Limit int64
	Files bool
}

// Error says what was over which limit; "<nil>" for a nil *SizeError.
func (e *SizeError) Error() string {
	if e == nil {
		return "<nil>"
	}
	what, at := "package", "reached"
	if e.Files {
		what, at = "files to package", "add up to"
	}
	return fmt.Sprintf("packaging: %s: %s %s %d bytes (%.1f MiB), over the limit of %d bytes (%.1f MiB)",
		e.Dir, what, at, e.Size, float64(e.Size)/(1<<20), e.Limit, float64(e.Limit)/(1<<20))
}

// Is makes a SizeError match ErrTooLarge.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }
