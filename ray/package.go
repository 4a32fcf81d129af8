package ray

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/raytpu/raytpu/runtimeenv"
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

// largeFile: files at least this big are streamed into the zip by the
// writer instead of being read whole by a worker.
const largeFile = 8 << 20

type entry struct {
	rel     string // slash-separated, relative to the root; "." for the root
	abs     string // path to open; "" for Extra files
	dir     bool
	empty   bool // an empty directory (gets a zip entry)
	special bool // not a regular file or directory, or a dangling link: hashed by name only, not zipped
	size    int64
	mode    fs.FileMode
	mtime   time.Time
	data    []byte // content of an Extra file
}

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

// walk lists what Ray would put in the package of dir, applying excludes
// and ignore files, and refusing symlinks that lead outside dir.
func walk(dir string, o PackageOptions) ([]entry, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: %w", dir, err)
	}
	if !st.IsDir() {
		if !o.allowFile || !st.Mode().IsRegular() {
			return nil, fmt.Errorf("ray: package %s: not a directory", dir)
		}
		// A single-file py_module: the package holds just the file, hashed
		// by its name and content (Ray's get_uri_for_file).
		return []entry{{rel: filepath.Base(dir), abs: dir, size: st.Size(), mode: st.Mode(), mtime: st.ModTime()}}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: %w", dir, err)
	}
	var excludes []string
	if !o.NoDefaultExcludes {
		excludes = append(excludes, DefaultExcludes...)
	}
	excludes = append(excludes, o.Excludes...)
	root, err := compileSpec("", excludes)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: excludes: %w", dir, err)
	}
	w := &walker{rootAbs: abs, rootReal: real, opts: o, specs: []*pathSpec{root}, onPath: map[string]bool{}}
	if err := w.walk(abs, "."); err != nil {
		return nil, err
	}
	if len(o.Extra) > 0 {
		out := w.entries[:0]
		for _, e := range w.entries {
			if _, ok := o.Extra[e.rel]; !ok {
				out = append(out, e)
			}
		}
		w.entries = out
		now := time.Now()
		for _, name := range slices.Sorted(mapsKeys(o.Extra)) {
			data := o.Extra[name]
			w.entries = append(w.entries, entry{rel: name, size: int64(len(data)), mode: 0o644, mtime: now, data: data})
		}
	}
	return w.entries, nil
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type walker struct {
	rootAbs, rootReal string
	opts              PackageOptions
	specs             []*pathSpec
	entries           []entry
	onPath            map[string]bool // real paths of the directories being walked (cycle check)
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func (w *walker) excluded(rel string) bool {
	for _, s := range w.specs {
		if s.match(rel) {
			return true
		}
	}
	return false
}

func (w *walker) walk(abs, rel string) error {
	// Excluded paths are never looked at (an excluded symlink may point
	// anywhere).
	if w.excluded(rel) {
		return nil
	}
	lst, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	info := lst
	special := false
	if lst.Mode()&fs.ModeSymlink != 0 {
		target, terr := os.Readlink(abs)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			// Dangling: decide from the link text where it points.
			if terr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(abs), target)
				}
				t := filepath.Clean(target)
				if !within(w.rootAbs, t) && !within(w.rootReal, t) {
					return fmt.Errorf("ray: package: symlink %s points outside %s (to %s)", abs, w.rootAbs, target)
				}
			}
			special = true
		} else {
			if !within(w.rootReal, real) {
				return fmt.Errorf("ray: package: symlink %s points outside %s (to %s)", abs, w.rootAbs, real)
			}
			if info, err = os.Stat(abs); err != nil {
				return fmt.Errorf("ray: package: %w", err)
			}
		}
	}
	isDir := !special && info.IsDir()
	if !special && !isDir && !info.Mode().IsRegular() {
		special = true
	}
	pushed := 0
	if isDir {
		base := rel
		if base == "." {
			base = ""
		}
		names := []string{".rayignore"}
		if !w.opts.IgnoreGitignore {
			names = []string{".gitignore", ".rayignore"}
		}
		for _, name := range names {
			p := filepath.Join(abs, name)
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("ray: package: %w", err)
			}
			spec, err := compileSpec(base, strings.Split(string(b), "\n"))
			if err != nil {
				return fmt.Errorf("ray: package: %s: %w", p, err)
			}
			w.specs = append(w.specs, spec)
			pushed++
		}
	}
	defer func() { w.specs = w.specs[:len(w.specs)-pushed] }()
	// A directory's own ignore files apply to it too (as ".").
	if pushed > 0 && w.excluded(rel) {
		return nil
	}
	e := entry{rel: rel, abs: abs, dir: isDir, special: special, mode: info.Mode(), mtime: info.ModTime()}
	if !isDir && !special {
		e.size = info.Size()
	}
	if !isDir {
		w.entries = append(w.entries, e)
		return nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	if w.onPath[real] {
		return fmt.Errorf("ray: package: symlink loop at %s", abs)
	}
	w.onPath[real] = true
	defer delete(w.onPath, real)
	ents, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	e.empty = len(ents) == 0
	w.entries = append(w.entries, e)
	for _, d := range ents {
		childRel := d.Name()
		if rel != "." {
			childRel = rel + "/" + d.Name()
		}
		if err := w.walk(filepath.Join(abs, d.Name()), childRel); err != nil {
			return err
		}
	}
	return nil
}

// hashSeed is Ray's starting value: eight ASCII zeros.
var hashSeed = [8]byte{'0', '0', '0', '0', '0', '0', '0', '0'}

// entryHash is Ray's per-path hash: SHA-1 of the relative path and, for a
// file, its content. Only the first 8 bytes count.
func entryHash(rel string, content []byte) [8]byte {
	h := sha1.New()
	h.Write([]byte(rel))
	h.Write(content)
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out
}

func xor8(a *[8]byte, b [8]byte) {
	for i := range a {
		a[i] ^= b[i]
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// hashEntry computes an entry's hash, streaming file content.
func hashEntry(e *entry) ([8]byte, error) {
	if e.dir || e.special {
		return entryHash(e.rel, nil), nil
	}
	if e.abs == "" {
		return entryHash(e.rel, e.data), nil
	}
	f, err := os.Open(e.abs)
	if err != nil {
		return [8]byte{}, fmt.Errorf("ray: package: %w", err)
	}
	defer f.Close()
	h := sha1.New()
	h.Write([]byte(e.rel))
	if err := copyPlain(h, f); err != nil {
		return [8]byte{}, fmt.Errorf("ray: package: reading %s: %w", e.abs, err)
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}

// copyPlain copies r to w through a pooled buffer (io.Copy would take
// *os.File's WriteTo path and allocate a buffer per call).
func copyPlain(w io.Writer, r io.Reader) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func uriForHash(h [8]byte) (string, string) {
	hx := hex.EncodeToString(h[:])
	return "gcs://_ray_pkg_" + hx + ".zip", hx
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
	acc := hashSeed
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			local := [8]byte{}
			for i := range next {
				h, err := hashEntry(&entries[i])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				xor8(&local, h)
			}
			mu.Lock()
			xor8(&acc, local)
			mu.Unlock()
		})
	}
	for i := range entries {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return "", firstErr
	}
	uri, _ := uriForHash(acc)
	return uri, nil
}

// prepared is a worker's output for one entry.
type prepared struct {
	hash   [8]byte
	crc    uint32
	method uint16
	data   []byte // compressed (or stored) bytes; nil for streamed entries
	stream bool   // a large file the writer streams itself
	size   int64  // uncompressed size read
	err    error
	buf    *bytes.Buffer // to return to the pool
}

var outPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var flatePools [10]sync.Pool

func getFlate(w io.Writer, level int) *flate.Writer {
	if fw, ok := flatePools[level].Get().(*flate.Writer); ok {
		fw.Reset(w)
		return fw
	}
	fw, _ := flate.NewWriter(w, level)
	return fw
}

const deflateLevel = flate.BestSpeed

func prepare(e *entry, store bool) prepared {
	if e.dir || e.special {
		return prepared{hash: entryHash(e.rel, nil)}
	}
	if e.abs != "" && e.size >= largeFile {
		return prepared{stream: true}
	}
	data := e.data
	if e.abs != "" {
		var err error
		data, err = os.ReadFile(e.abs)
		if err != nil {
			return prepared{err: fmt.Errorf("ray: package: %w", err)}
		}
	}
	p := prepared{hash: entryHash(e.rel, data), crc: crc32.ChecksumIEEE(data), size: int64(len(data)), method: zip.Store, data: data}
	if store || len(data) < 64 {
		return p
	}
	buf := outPool.Get().(*bytes.Buffer)
	buf.Reset()
	fw := getFlate(buf, deflateLevel)
	fw.Write(data)
	fw.Close()
	flatePools[deflateLevel].Put(fw)
	if buf.Len() < len(data) {
		p.method, p.data, p.buf = zip.Deflate, buf.Bytes(), buf
	} else {
		outPool.Put(buf)
	}
	return p
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

// limitWriter counts what passes and fails once the size limit is reached.
type limitWriter struct {
	w   io.Writer
	n   int64
	max int64
	dir string
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) >= l.max {
		return 0, sizeError(l.dir, l.n+int64(len(p)), l.max, false)
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// writePackage writes the zip of entries to w. The returned Package has no
// Bytes.
func writePackage(w io.Writer, dir string, entries []entry, opts PackageOptions) (*Package, error) {
	var total int64
	for _, e := range entries {
		total += e.size
	}
	if opts.Store && total >= opts.MaxSize {
		return nil, sizeError(dir, total, opts.MaxSize, true)
	}
	prefix := ""
	if opts.includeParentDir {
		abs, _ := filepath.Abs(dir)
		prefix = filepath.Base(abs) + "/"
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	window := 4 * opts.Workers
	type job struct {
		i   int
		out chan prepared
	}
	jobs := make(chan job)
	order := make(chan job, window)
	go func() {
		defer close(order)
		defer close(jobs)
		for i := range entries {
			j := job{i: i, out: make(chan prepared, 1)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for j := range jobs {
				j.out <- prepare(&entries[j.i], opts.Store)
			}
		})
	}
	defer wg.Wait()
	defer cancel()

	lw := &limitWriter{w: w, max: opts.MaxSize, dir: dir}
	zw := zip.NewWriter(lw)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, deflateLevel)
	})
	acc := hashSeed
	files := 0
	for j := range order {
		p := <-j.out
		e := &entries[j.i]
		if p.err != nil {
			return nil, p.err
		}
		name := prefix + e.rel
		switch {
		case e.dir || e.special:
			xor8(&acc, p.hash)
			if e.dir && e.empty {
				// Python's zipfile names an empty root "./".
				zname := name + "/"
				if e.rel == "." {
					zname = prefix
					if zname == "" {
						zname = "./"
					}
				}
				hdr := &zip.FileHeader{Name: zname, Method: zip.Store, Modified: e.mtime}
				hdr.SetMode(e.mode)
				if _, err := zw.CreateHeader(hdr); err != nil {
					return nil, err
				}
				files++
			}
		case p.stream:
			h, err := streamFile(zw, name, e, opts.Store)
			if err != nil {
				return nil, err
			}
			xor8(&acc, h)
			files++
		default:
			xor8(&acc, p.hash)
			hdr := &zip.FileHeader{Name: name, Method: p.method, CRC32: p.crc,
				CompressedSize64: uint64(len(p.data)), UncompressedSize64: uint64(p.size), Modified: e.mtime}
			hdr.SetMode(e.mode.Perm())
			zf, err := zw.CreateRaw(hdr)
			if err != nil {
				return nil, err
			}
			if _, err := zf.Write(p.data); err != nil {
				return nil, err
			}
			if p.buf != nil {
				outPool.Put(p.buf)
			}
			files++
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	uri, hx := uriForHash(acc)
	return &Package{URI: uri, Hash: hx, Size: lw.n, Files: files}, nil
}

func sizeError(dir string, size, limit int64, raw bool) error {
	what := "package"
	at := "is"
	if raw {
		what = "files to package"
		at = "add up to"
	}
	if size >= limit && !raw {
		at = "reached"
	}
	return fmt.Errorf("ray: %s: %s %s %d bytes (%.1f MiB), over the limit of %d bytes (%.1f MiB); exclude large files (PackageOptions.Excludes, .rayignore) or upload them elsewhere",
		dir, what, at, size, float64(size)/(1<<20), limit, float64(limit)/(1<<20))
}

// streamFile writes a large file into the zip while hashing it.
func streamFile(zw *zip.Writer, name string, e *entry, store bool) ([8]byte, error) {
	f, err := os.Open(e.abs)
	if err != nil {
		return [8]byte{}, fmt.Errorf("ray: package: %w", err)
	}
	defer f.Close()
	method := zip.Deflate
	if store {
		method = zip.Store
	}
	hdr := &zip.FileHeader{Name: name, Method: method, Modified: e.mtime}
	hdr.SetMode(e.mode.Perm())
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return [8]byte{}, err
	}
	h := sha1.New()
	h.Write([]byte(e.rel))
	if err := copyPlain(io.MultiWriter(h, w), f); err != nil {
		return [8]byte{}, fmt.Errorf("ray: package: reading %s: %w", e.abs, err)
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}

// packagePath turns "gcs://_ray_pkg_x.zip" into "/api/packages/gcs/_ray_pkg_x.zip".
func packagePath(uri string) (string, error) {
	scheme, name, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" || name == "" || strings.ContainsAny(name, "/?#") {
		return "", fmt.Errorf("ray: %w: bad package URI %q (want gcs://<name>.zip)", ErrInvalid, uri)
	}
	return "/api/packages/" + scheme + "/" + name, nil
}

// PackageExists reports whether the cluster holds the package. Like Ray's
// client, the check also pins the package in the GCS for a while so it is
// not collected before a job uses it.
func (c *Client) PackageExists(ctx context.Context, uri string) (bool, error) {
	p, err := packagePath(uri)
	if err != nil {
		return false, err
	}
	_, _, err = c.do(ctx, request{method: http.MethodGet, path: p, retry: true})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// UploadPackage uploads pkg unless the cluster already has it (GET first,
// then PUT). It reports whether it uploaded. Both requests are retried:
// a package is named by its content, so a repeated PUT is harmless.
func (c *Client) UploadPackage(ctx context.Context, pkg *Package) (bool, error) {
	if pkg == nil {
		return false, fmt.Errorf("ray: UploadPackage: %w: nil package", ErrInvalid)
	}
	exists, err := c.PackageExists(ctx, pkg.URI)
	if err != nil {
		return false, err
	}
	if exists {
		c.logger.DebugContext(ctx, "ray: package already on the cluster", "uri", pkg.URI)
		return false, nil
	}
	return true, c.putPackage(ctx, pkg)
}

func (c *Client) putPackage(ctx context.Context, pkg *Package) error {
	p, err := packagePath(pkg.URI)
	if err != nil {
		return err
	}
	start := time.Now()
	_, _, err = c.do(ctx, request{method: http.MethodPut, path: p, body: pkg.Bytes, ctype: "application/zip", retry: true})
	if err == nil {
		c.logger.DebugContext(ctx, "ray: uploaded package", "uri", pkg.URI, "bytes", pkg.Size, "took", time.Since(start))
	}
	return err
}

// UploadDir makes dir's package available on the cluster and returns its
// URI: it hashes dir, asks whether the cluster has that package, and only
// if not zips it and uploads it, streaming the zip into the PUT as it is
// written (the zip is never held whole). uploaded reports whether it
// uploaded. A failed upload is retried like other package requests,
// zipping again.
func (c *Client) UploadDir(ctx context.Context, dir string, opts PackageOptions) (uri string, uploaded bool, err error) {
	uri, err = HashDir(dir, opts)
	if err != nil {
		return "", false, err
	}
	exists, err := c.PackageExists(ctx, uri)
	if err != nil {
		return "", false, err
	}
	if exists {
		return uri, false, nil
	}
	if _, err := c.uploadStreaming(ctx, uri, dir, opts); err != nil {
		return "", false, err
	}
	return uri, true, nil
}

// errUploadEnded stops a packaging goroutine whose upload has ended.
var errUploadEnded = errors.New("ray: upload ended")

// uploadStreaming zips dir straight into PUT /api/packages/... for uri.
func (c *Client) uploadStreaming(ctx context.Context, uri, dir string, opts PackageOptions) (*Package, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	path, err := packagePath(uri)
	if err != nil {
		return nil, err
	}
	entries, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	type result struct {
		pkg *Package
		err error
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		pr, pw := io.Pipe()
		res := make(chan result, 1)
		go func() {
			pkg, err := writePackage(pw, dir, entries, opts)
			if err == nil && pkg.URI != uri {
				err = fmt.Errorf("ray: %s changed while it was being packaged (%s, then %s); try again", dir, uri, pkg.URI)
			}
			pw.CloseWithError(err) // nil: the reader sees EOF
			res <- result{pkg, err}
		}()
		_, err := c.once(ctx, request{method: http.MethodPut, path: path, stream: pr, ctype: "application/zip"})
		pr.CloseWithError(errUploadEnded)
		r := <-res
		if r.err != nil && !errors.Is(r.err, errUploadEnded) {
			// Packaging itself failed (size limit, unreadable file, the
			// directory changed): retrying would not help.
			return nil, r.err
		}
		if err == nil {
			if r.err != nil {
				return nil, fmt.Errorf("ray: upload of %s: answered before the package was sent", uri)
			}
			c.logger.DebugContext(ctx, "ray: uploaded package", "uri", uri, "bytes", r.pkg.Size, "took", time.Since(start))
			return r.pkg, nil
		}
		if attempt >= c.retry.MaxAttempts || !transient(err) || ctx.Err() != nil {
			return nil, err
		}
		wait := c.retry.backoff(attempt)
		c.logger.DebugContext(ctx, "ray: retrying package upload", "uri", uri, "attempt", attempt, "backoff", wait, "error", err.Error())
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (last error: %v)", serr, err)
		}
	}
}

// PrepareRuntimeEnv returns a copy of env whose local WorkingDir and
// PyModules (directories or .py files) are uploaded (when the cluster lacks
// them) and replaced by their gcs:// URIs, as Ray's Python
// JobSubmissionClient does before it submits. For the working_dir,
// env.Excludes are added to opts.Excludes; py_modules get env.Excludes only,
// as in Ray.
func (c *Client) PrepareRuntimeEnv(ctx context.Context, env *runtimeenv.RuntimeEnv, opts PackageOptions) (*runtimeenv.RuntimeEnv, error) {
	out := env.Clone()
	if out == nil {
		return nil, nil
	}
	opts.Excludes = append(slices.Clone(opts.Excludes), env.Excludes...)
	if out.WorkingDir != "" && !isURI(out.WorkingDir) {
		uri, _, err := c.UploadDir(ctx, out.WorkingDir, opts)
		if err != nil {
			return nil, err
		}
		out.WorkingDir = uri
	}
	for i, m := range out.PyModules {
		if isURI(m) {
			continue
		}
		// As Ray's client: a directory is zipped under its own name, a .py
		// file alone; only runtime_env excludes apply (not DefaultExcludes
		// nor Extra).
		st, err := os.Stat(m)
		if err != nil {
			return nil, fmt.Errorf("ray: py_modules: %w", err)
		}
		mo := opts
		mo.Extra, mo.NoDefaultExcludes = nil, true
		mo.Excludes = slices.Clone(env.Excludes)
		if st.IsDir() {
			mo.includeParentDir = true
		} else if filepath.Ext(m) == ".py" {
			mo.allowFile = true
		} else {
			return nil, fmt.Errorf("ray: py_modules: %s is neither a directory nor a .py file (upload wheels yourself)", m)
		}
		uri, _, err := c.UploadDir(ctx, m, mo)
		if err != nil {
			return nil, err
		}
		out.PyModules[i] = uri
	}
	return out, nil
}

// sortedEntries is used by tests to list what a package would hold.
func packageFiles(dir string, opts PackageOptions) ([]string, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	es, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		switch {
		case e.dir && e.empty:
			out = append(out, e.rel+"/")
		case !e.dir && !e.special:
			out = append(out, path.Clean(e.rel))
		}
	}
	sort.Strings(out)
	return out, nil
}
