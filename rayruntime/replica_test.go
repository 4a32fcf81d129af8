package rayruntime_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/rayruntime"
)

// The written module is the embedded one, byte for byte, under the name
// Python imports, and it names the key and version the Go side uses.
func TestWriteModule(t *testing.T) {
	t.Parallel()
	path, err := rayruntime.WriteModule(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != rayruntime.ModuleName+".py" {
		t.Errorf("module file %s, want %s.py", path, rayruntime.ModuleName)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, rayruntime.Module()) || len(got) == 0 {
		t.Errorf("written module (%d bytes) differs from the embedded one (%d bytes)", len(got), len(rayruntime.Module()))
	}
	for _, want := range []string{
		fmt.Sprintf("RESERVATION_KEY = %q", rayruntime.ReservationKey),
		fmt.Sprintf("RESERVATION_VERSION = %d", rayruntime.ReservationVersion),
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the runtime lacks %s", want)
		}
	}
}
