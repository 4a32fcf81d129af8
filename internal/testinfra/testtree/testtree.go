// Package testtree writes directory trees of text-like files for packaging
// tests and benchmarks.
package testtree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Generate writes n files of size bytes each under dir, spread over nested
// directories. The content is text-like (it deflates about 3:1) and fixed
// by seed, so runs compare. It returns the bytes written.
func Generate(dir string, n, size int, seed uint64) (int64, error) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	words := []string{"tpu", "slice", "jax", "ray", "train", "batch", "shard", "mesh", "host", "chip", "step", "loss"}
	buf := make([]byte, 0, size+16)
	var total int64
	for i := range n {
		buf = buf[:0]
		for len(buf) < size {
			buf = append(buf, words[r.IntN(len(words))]...)
			buf = append(buf, ' ')
			if r.IntN(8) == 0 {
				buf = fmt.Appendf(buf, "%d\n", r.Uint32())
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("e%02d", i%13), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return total, err
		}
		if err := os.WriteFile(p, buf[:size], 0o644); err != nil {
			return total, err
		}
		total += int64(size)
	}
	return total, nil
}
