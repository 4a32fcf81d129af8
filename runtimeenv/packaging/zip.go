package packaging

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
	"sync"
	"time"

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

func (t *Tree) prepare(e *entry) prepared {
	if e.dir || e.special {
		return prepared{hash: entryHash(e.rel, nil)}
	}
	if e.src != "" && e.size >= largeFile {
		return prepared{stream: true}
	}
	data := e.data
	if e.src != "" {
		var err error
		data, err = t.readFile(e)
		if err != nil {
			return prepared{err: fmt.Errorf("packaging: %w", err)}
		}
	}
	p := prepared{hash: entryHash(e.rel, data), crc: crc32.ChecksumIEEE(data), size: int64(len(data)), method: zip.Store, data: data}
	if t.opts.Store || len(data) < 64 {
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
	if l.n+int64(len(p)) > l.max {
		return 0, &SizeError{Dir: l.dir, Size: l.n + int64(len(p)), Limit: l.max}
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// WriteZip writes the zip of the tree to w, as Ray's Python client zips a
// package (the same names and content; file modes kept; entries dated
// Options.Modified when set), reading, hashing and compressing files on
// Options.Workers goroutines. written, when not nil, is called with the
// size of every file once it is in the zip. Past Options.MaxSize it stops
// with a *SizeError. A tree may be written more than once.
func (t *Tree) WriteZip(w io.Writer, written func(size int64)) (*Zip, error) {
	if !t.usable() {
		return nil, errNoTree
	}
	if w == nil {
		return nil, errors.New("packaging: nil io.Writer: pass the writer the zip goes to")
	}
	opts, dir, entries := t.opts, t.dir, t.entries
	if opts.Store && t.total > opts.MaxSize {
		return nil, &SizeError{Dir: dir, Size: t.total, Limit: opts.MaxSize, Files: true}
	}
	prefix := opts.Prefix
	stamp := func(mtime time.Time) time.Time {
		if !opts.Modified.IsZero() {
			return opts.Modified
		}
		return mtime
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
				j.out <- t.prepare(&entries[i])
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
				hdr := &zip.FileHeader{Name: zname, Method: zip.Store, Modified: stamp(e.mtime)}
				hdr.SetMode(e.mode)
				if _, err := zw.CreateHeader(hdr); err != nil {
					return nil, err
				}
				files++
			}
		case p.stream:
			h, err := t.streamFile(zw, name, e, stamp(e.mtime))
			if err != nil {
				return nil, err
			}
			xor8(&acc, h)
			files++
		default:
			xor8(&acc, p.hash)
			hdr := &zip.FileHeader{Name: name, Method: p.method, CRC32: p.crc,
				CompressedSize64: uint64(len(p.data)), UncompressedSize64: uint64(p.size), Modified: stamp(e.mtime)}
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
	return &Zip{Hash: hex.EncodeToString(acc[:]), Size: lw.n, Files: files}, nil
}

// streamFile writes a large file into the zip while hashing it.
func (t *Tree) streamFile(zw *zip.Writer, name string, e *entry, modified time.Time) ([8]byte, error) {
	f, err := t.open(e)
	if err != nil {
		return [8]byte{}, fmt.Errorf("packaging: %w", err)
	}
	defer f.Close()
	method := zip.Deflate
	if t.opts.Store {
		method = zip.Store
	}
	hdr := &zip.FileHeader{Name: name, Method: method, Modified: modified}
	hdr.SetMode(e.mode.Perm())
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return [8]byte{}, err
	}
	h := sha1.New()
	h.Write([]byte(e.rel))
	if err := copyPlain(io.MultiWriter(h, w), f); err != nil {
		return [8]byte{}, fmt.Errorf("packaging: reading %s: %w", t.display(e), err)
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}
