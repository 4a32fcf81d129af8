package packaging_test

import (
	"bytes"
	"testing"

	"github.com/raytpu/raytpu/runtimeenv/packaging"
)

// A Tree that Walk did not make (nil or zero) errors from Hash and
// WriteZip and answers zero values from the rest.
func TestNilAndZeroTree(t *testing.T) {
	for name, tr := range map[string]*packaging.Tree{"nil": nil, "zero": new(packaging.Tree)} {
		if h, err := tr.Hash(); err == nil {
			t.Errorf("%s Tree: Hash = %q, want an error", name, h)
		}
		var b bytes.Buffer
		if z, err := tr.WriteZip(&b, nil); err == nil || z != nil || b.Len() != 0 {
			t.Errorf("%s Tree: WriteZip = %v, %v (%d bytes), want an error and nothing written", name, z, err, b.Len())
		}
		if tr.Files() != nil || tr.Size() != 0 || tr.Close() != nil {
			t.Errorf("%s Tree: Files, Size or Close answered", name)
		}
	}
	var se *packaging.SizeError
	if se.Error() != "<nil>" {
		t.Errorf("nil SizeError: %q", se.Error())
	}
}

func TestWriteZipNilWriter(t *testing.T) {
	tr, err := packaging.Walk(t.TempDir(), packaging.Options{MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.WriteZip(nil, nil); err == nil {
		t.Error("WriteZip(nil) did not error")
	}
}
