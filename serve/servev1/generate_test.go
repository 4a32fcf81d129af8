package servev1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// generated are the files generate.sh writes, relative to its output dir.
var generated = []string{
	"predictor.pb.go",
	"predictor_grpc.pb.go",
	"python/raytpu/serve/v1/predictor_pb2.py",
	"python/raytpu/serve/v1/predictor_pb2_grpc.py",
}

// The committed generated code is exactly what generate.sh produces from
// predictor.proto with the pinned protoc (grpcio-tools) and Go plugins.
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
	for _, f := range generated {
		want, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Fatalf("committed %s: %v", f, err)
		}
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("regenerated %s: %v", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what generate.sh produces from the .proto (%d bytes committed, %d regenerated): run go generate ./serve/servev1", f, len(want), len(got))
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 { // two Go files and python/
		t.Errorf("generate.sh wrote %d entries at the top of its output, want 3 (predictor.pb.go, predictor_grpc.pb.go, python)", len(entries))
	}
}
