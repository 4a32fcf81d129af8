package ray

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
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
