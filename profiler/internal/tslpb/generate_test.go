package tslpb_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// The committed generated code is exactly what generate.sh produces from
// the .proto files with the pinned protoc (grpcio-tools) and Go plugins.
func TestGeneratedCodeMatchesProto(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	if err := exec.CommandContext(t.Context(), py, "-c", "import grpc_tools").Run(); err != nil {
		t.Fatalf("this test needs grpcio-tools in the project virtualenv: run scripts/setup-venv.sh: %v", err)
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "./generate.sh", out)
	cmd.Env = append(os.Environ(), "RAYTPU_VENV="+filepath.Dir(filepath.Dir(py)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	generated := []string{"xplane.pb.go", "profiler_service.pb.go", "profiler_service_grpc.pb.go"}
	for _, f := range generated {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("committed %s: %v", f, err)
		}
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("regenerated %s: %v", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what generate.sh produces from the .proto (%d bytes committed, %d regenerated): run go generate ./profiler/internal/tslpb", f, len(want), len(got))
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(generated) {
		t.Errorf("generate.sh wrote %d files, want %d (%v)", len(entries), len(generated), generated)
	}
}
