package ray_test

import (
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/testtree"
	"github.com/raytpu/raytpu/ray"
)

// genTree writes n files of size bytes each in nested directories.
func genTree(tb testing.TB, n, size int) (dir string, total int64) {
	tb.Helper()
	dir = tb.TempDir()
	total, err := testtree.Generate(dir, n, size, 1)
	if err != nil {
		tb.Fatal(err)
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
