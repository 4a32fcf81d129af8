package ray

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/flate"
	"golang.org/x/sync/errgroup"
)

// largeFile: files at least this big are streamed into the zip by the
// writer instead of being read whole by a worker.
const largeFile = 8 << 20

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
	return writePackageFunc(w, dir, entries, opts, nil)
}

// writePackageFunc is writePackage calling written (when not nil) with
// the size of every entry once it is in the zip.
func writePackageFunc(w io.Writer, dir string, entries []entry, opts PackageOptions, written func(size int64)) (*Package, error) {
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

	// Entries are prepared (read, hashed, compressed) by up to
	// opts.Workers goroutines at once and written in order; the order
	// channel bounds how far preparing runs ahead of writing.
	ctx, cancel := context.WithCancel(context.Background())
	type job struct {
		i   int
		out chan prepared
	}
	order := make(chan job, 4*opts.Workers)
	var g errgroup.Group
	g.SetLimit(opts.Workers)
	queued := make(chan struct{})
	go func() {
		defer close(queued)
		defer close(order)
		for i := range entries {
			j := job{i: i, out: make(chan prepared, 1)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			g.Go(func() error {
				j.out <- prepare(&entries[i], opts.Store)
				return nil
			})
		}
	}()
	defer func() {
		cancel()
		<-queued // no g.Go after this
		g.Wait()
	}()

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
		if written != nil {
			written(e.size)
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
