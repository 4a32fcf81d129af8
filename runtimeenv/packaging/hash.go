package packaging

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"golang.org/x/sync/errgroup"
)

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
func (t *Tree) hashEntry(e *entry) ([8]byte, error) {
	if e.dir || e.special {
		return entryHash(e.rel, nil), nil
	}
	if e.src == "" {
		return entryHash(e.rel, e.data), nil
	}
	f, err := t.open(e)
	if err != nil {
		return [8]byte{}, fmt.Errorf("packaging: %w", err)
	}
	defer f.Close()
	h := sha1.New()
	h.Write([]byte(e.rel))
	if err := copyPlain(h, f); err != nil {
		return [8]byte{}, fmt.Errorf("packaging: reading %s: %w", t.display(e), err)
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

// Hash returns Ray's content hash of the tree (16 hex digits, as in
// ray._private.runtime_env.packaging.get_uri_for_directory; see URI),
// reading files on Options.Workers goroutines without zipping them.
func (t *Tree) Hash() (string, error) {
	if !t.usable() {
		return "", errNoTree
	}
	hashes := make([][8]byte, len(t.entries))
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(t.opts.Workers)
	for i := range t.entries {
		if ctx.Err() != nil {
			break // a file failed: the rest need not be read
		}
		g.Go(func() error {
			var err error
			hashes[i], err = t.hashEntry(&t.entries[i])
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
	return hex.EncodeToString(acc[:]), nil
}

// display names an entry's file in an error.
func (t *Tree) display(e *entry) string {
	if t.root == nil {
		return e.src
	}
	abs, err := filepath.Abs(t.dir)
	if err != nil {
		abs = t.dir
	}
	return filepath.Join(abs, filepath.FromSlash(e.rel))
}
