package ray_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/ray"
)

// genTree writes n files of about size bytes each in nested directories.
// Content is text-like (compresses about 3:1), seeded so runs compare.
func genTree(tb testing.TB, n, size int) (dir string, total int64) {
	tb.Helper()
	dir = tb.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"tpu", "slice", "jax", "ray", "train", "batch", "shard", "mesh", "host", "chip", "step", "loss"}
	buf := make([]byte, 0, size+16)
	for i := range n {
		buf = buf[:0]
		for len(buf) < size {
			buf = append(buf, words[r.IntN(len(words))]...)
			buf = append(buf, ' ')
			if r.IntN(8) == 0 {
				buf = fmt.Appendf(buf, "%d\n", r.Uint32())
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%37), fmt.Sprintf("e%02d", i%11), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, buf[:size], 0o644); err != nil {
			tb.Fatal(err)
		}
		total += int64(size)
	}
	return dir, total
}

func BenchmarkPackageDir(b *testing.B) {
	dir, total := genTree(b, 2000, 16<<10)
	for _, store := range []bool{false, true} {
		b.Run(fmt.Sprintf("store=%v", store), func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				pkg, err := ray.PackageDir(dir, ray.PackageOptions{Store: store})
				if err != nil {
					b.Fatal(err)
				}
				size = pkg.Size
			}
			b.ReportMetric(float64(size)/float64(total), "zip/raw")
		})
	}
}

func BenchmarkHashDir(b *testing.B) {
	dir, total := genTree(b, 2000, 16<<10)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ray.HashDir(dir, ray.PackageOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
