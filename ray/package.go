package ray

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/raytpu/raytpu/runtimeenv/packaging"
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

// DefaultExcludes returns the patterns Ray's clients always add to a
// working dir's excludes (RAY_RUNTIME_ENV_DEFAULT_EXCLUDES in Ray 2.60):
// the one list of package packaging, shared by every backend, in a fresh
// slice.
func DefaultExcludes() []string { return packaging.DefaultExcludes() }

// PackageOptions configures PackageDir, HashDir and UploadDir. Packaging
// itself (the walk, ignore files, excludes, the symlink policy, the size
// limit and the zip) is package packaging's, the same for every backend:
// see packaging.Walk for what is shipped and what is refused. The fields
// mean what the packaging.Options fields of the same names mean, with
// these defaults.
type PackageOptions struct {
	Excludes          []string
	NoDefaultExcludes bool
	IgnoreGitignore   bool
	Extra             map[string][]byte
	// MaxSize: default DefaultMaxPackageSize (the dashboard's upload
	// limit). It may not reach GCSStorageMaxSize.
	MaxSize int64
	// Store: default false, deflate (fast level), per file, in parallel.
	Store bool
	// Workers: default runtime.GOMAXPROCS(0).
	Workers int

	// includeParentDir prefixes zip entries with the directory's name (Ray
	// does so for py_modules).
	includeParentDir bool
	// allowFile accepts a single regular file (a .py py_module).
	allowFile bool
}

// Package is a zipped directory, named by its content hash the way Ray
// names it, ready for upload. A nil *Package's Name is "".
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
// A nil *Package has no name: "".
func (p *Package) Name() string {
	if p == nil {
		return ""
	}
	return "_ray_pkg_" + p.Hash + ".zip"
}

func (o *PackageOptions) normalize() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxPackageSize
	}
	return nil
}

// Validate reports options that packaging refuses: a MaxSize below 0, or
// not below GCSStorageMaxSize. The zero value is valid.
func (o PackageOptions) Validate() error {
	if o.MaxSize < 0 || o.MaxSize >= GCSStorageMaxSize {
		return fmt.Errorf("ray: PackageOptions.MaxSize %d must be in (0, %d), or 0 for the default %d",
			o.MaxSize, int64(GCSStorageMaxSize), int64(DefaultMaxPackageSize))
	}
	return nil
}

// walk lists the package of dir (see packaging.Walk); the tree must be
// closed.
func walk(dir string, o PackageOptions) (*packaging.Tree, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	po := packaging.Options{
		Excludes:          o.Excludes,
		NoDefaultExcludes: o.NoDefaultExcludes,
		IgnoreGitignore:   o.IgnoreGitignore,
		Extra:             o.Extra,
		MaxSize:           o.MaxSize,
		Store:             o.Store,
		Workers:           o.Workers,
		AllowFile:         o.allowFile,
	}
	if o.includeParentDir {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("ray: package %s: %w", dir, err)
		}
		po.Prefix = filepath.Base(abs) + "/"
	}
	return packaging.Walk(dir, po)
}

// packageError adds to a packaging error over the size limit what to do.
func packageError(err error) error {
	if errors.Is(err, packaging.ErrTooLarge) {
		return fmt.Errorf("ray: %w; exclude large files (PackageOptions.Excludes, .rayignore) or upload them elsewhere", err)
	}
	return err
}

// HashDir returns the gcs:// URI Ray's Python client would give dir (the
// same content hash as ray._private.runtime_env.packaging.
// get_uri_for_directory), reading files in parallel without zipping them.
// What is hashed and what is refused is packaging.Walk's.
func HashDir(dir string, opts PackageOptions) (string, error) {
	t, err := walk(dir, opts)
	if err != nil {
		return "", err
	}
	defer t.Close()
	h, err := t.Hash()
	if err != nil {
		return "", err
	}
	return packaging.URI(h), nil
}

// PackageDir zips dir the way Ray's Python client packages a working_dir
// (same files, same excludes, same URI), reading, hashing and compressing
// files on several cores. The zip is held in memory once.
func PackageDir(dir string, opts PackageOptions) (*Package, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	t, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	// Reserve the worst case up front (bounded by the size limit, which
	// ends packaging), so the zip is never copied to a bigger buffer.
	// Capacity that compression leaves unused is never touched.
	est := t.Size() + int64(len(t.Files()))*160 + 64<<10
	out := bytes.NewBuffer(make([]byte, 0, min(est, opts.MaxSize+64<<10)))
	z, err := t.WriteZip(out, nil)
	if err != nil {
		return nil, packageError(err)
	}
	return &Package{URI: packaging.URI(z.Hash), Hash: z.Hash, Size: z.Size, Files: z.Files, Bytes: out.Bytes()}, nil
}
