package servev1

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ServicerFunction is the import path of the generated Python function
// that registers Predictor on a gRPC server: the entry to list in the Serve
// config's grpc_options.grpc_servicer_functions.
const ServicerFunction = "raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"

//go:embed python/raytpu/serve/v1/*.py
var python embed.FS

// PythonFiles lists the embedded Python files by their path under a
// PYTHONPATH directory ("raytpu/serve/v1/predictor_pb2.py", ...).
func PythonFiles() []string {
	var out []string
	_ = fs.WalkDir(python, "python", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel("python", path)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}

// WritePython writes the generated Python package and its tensor helper
// under dir (dir/raytpu/serve/v1/...), creating directories as needed, so
// that dir can go on PYTHONPATH. raytpu and raytpu/serve are namespace
// packages (no __init__.py), so they merge with other directories of the
// same names.
func WritePython(dir string) error {
	if dir == "" {
		return fmt.Errorf("servev1: WritePython: dir is empty")
	}
	for _, rel := range PythonFiles() {
		b, err := python.ReadFile("python/" + rel)
		if err != nil {
			return fmt.Errorf("servev1: WritePython: %w", err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("servev1: WritePython: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("servev1: WritePython: %w", err)
		}
	}
	return nil
}
