package kuberay_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/kuberay"
)

// DecodeManifest never panics on any input, and what it accepts
// re-encodes and decodes to the same bytes. Seeds: every golden manifest.
func FuzzDecodeManifest(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.golden.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\n"))
	f.Add([]byte("apiVersion: ray.io/v1\nkind: Pod\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := kuberay.DecodeManifest(b)
		if err != nil {
			return
		}
		y, err := kuberay.MarshalYAML(obj)
		if err != nil {
			t.Fatalf("an accepted manifest does not re-encode: %v", err)
		}
		again, err := kuberay.DecodeManifest(y)
		if err != nil {
			t.Fatalf("a re-encoded manifest does not decode: %v\n%s", err, y)
		}
		y2, err := kuberay.MarshalYAML(again)
		if err != nil || string(y2) != string(y) {
			t.Fatalf("re-encoding is not stable:\n%s\n---\n%s", y, y2)
		}
	})
}
