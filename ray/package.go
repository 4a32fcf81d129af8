package ray

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Package limits, as in Ray 2.60.
const (
	// DefaultMaxPackageSize is the largest package (zip bytes) the
	// dashboard accepts in one PUT, less one byte: aiohttp's
	// client_max_size is DASHBOARD_CLIENT_MAX_SIZE = 100 MiB and a body of
	// that size or more is rejected with HTTP 413.
	DefaultMaxPackageSize = 100<<20 - 1
	// GCSStorageMaxSize is Ray's GCS_STORAGE_MAX_SIZE (the gRPC message
	// limit, 512 MiB): no package may reach it, whatever the transport.
	GCSStorageMaxSize = 512 << 20
)

// DefaultExcludes are the patterns Ray's clients always add to a working
// dir's excludes (RAY_RUNTIME_ENV_DEFAULT_EXCLUDES in Ray 2.60).
var DefaultExcludes = []string{".git", ".venv", "venv", "__pycache__"}

// PackageOptions configures PackageDir and HashDir.
type PackageOptions struct {
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
	// MaxSize is the largest zip accepted, in bytes. Default
	// DefaultMaxPackageSize (the dashboard's upload limit). It may not
	// reach GCSStorageMaxSize.
	MaxSize int64
	// Store writes files uncompressed, as Ray's Python client does.
	// Default: deflate (fast level), per file, in parallel.
	Store bool
	// Workers is how many files are read, hashed and compressed at once.
	// Default runtime.GOMAXPROCS(0).
	Workers int

	// includeParentDir prefixes zip entries with the directory's name (Ray
	// does so for py_modules).
	includeParentDir bool
	// allowFile accepts a single regular file (a .py py_module).
	allowFile bool
}

// Package is a zipped directory, named by its content hash the way Ray
// names it, ready for upload.
type Package struct {
	// URI is "gcs://_ray_pkg_<Hash>.zip".
	URI string
	// Hash is Ray's content hash: 16 hex digits.
	Hash string
	// Size is len(Bytes).
	Size int64
	// Files counts the zip entries (files and empty directories).
	Files int
	// Bytes is the zip.
	Bytes []byte
}

// Name returns the package's file name, "_ray_pkg_<hash>.zip".
func (p *Package) Name() string { return "_ray_pkg_" + p.Hash + ".zip" }

func (o *PackageOptions) normalize() error {
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxPackageSize
	}
	if o.MaxSize < 0 || o.MaxSize >= GCSStorageMaxSize {
		return fmt.Errorf("ray: PackageOptions.MaxSize %d must be in (0, %d)", o.MaxSize, int64(GCSStorageMaxSize))
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	for name := range o.Extra {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("ray: PackageOptions.Extra: bad file name %q: want a plain name at the zip root", name)
		}
	}
	return nil
}

// HashDir returns the gcs:// URI Ray's Python client would give dir (the
// same content hash as ray._private.runtime_env.packaging.
// get_uri_for_directory), reading files in parallel without zipping them.
func HashDir(dir string, opts PackageOptions) (string, error) {
	if err := opts.normalize(); err != nil {
		return "", err
	}
	entries, err := walk(dir, opts)
	if err != nil {
		return "", err
	}
	hashes := make([][8]byte, len(entries))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(opts.Workers)
	for i := range entries {
		if ctx.Err() != nil {
			break // a file failed: the rest need not be read
		}
		g.Go(func() error {
			var err error
			hashes[i], err = hashEntry(&entries[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	acc := hashSeed
	for _, h := range hashes {
		xor8(&acc, h)
	}
	uri, _ := uriForHash(acc)
	return uri, nil
}

// PackageDir zips dir the way Ray's Python client packages a working_dir
// (same files, same excludes, same URI), reading, hashing and compressing
// files on several cores. The zip is held in memory once.
func PackageDir(dir string, opts PackageOptions) (*Package, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	entries, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range entries {
		total += e.size
	}
	// Reserve the worst case up front (bounded by the size limit, which
	// ends packaging), so the zip is never copied to a bigger buffer.
	// Capacity that compression leaves unused is never touched.
	est := total + int64(len(entries))*160 + 64<<10
	out := bytes.NewBuffer(make([]byte, 0, min(est, opts.MaxSize+64<<10)))
	pkg, err := writePackage(out, dir, entries, opts)
	if err != nil {
		return nil, err
	}
	pkg.Bytes = out.Bytes()
	return pkg, nil
}
