package rayruntime

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed python/raytpu_replica/__init__.py
var module []byte

// ModuleFile is the file name of the runtime; its import name is ModuleName.
const (
	ModuleFile = "raytpu_replica.py"
	ModuleName = "raytpu_replica"
)

// ReservationKey is the user_config key holding a replica's slice
// reservation, and ReservationVersion the reservation format the runtime
// reads (serve.SliceReservationKey and serve.SliceReservationVersion).
const (
	ReservationKey     = "raytpu_slice"
	ReservationVersion = 1
)

// Module returns the embedded runtime source.
func Module() []byte { return append([]byte(nil), module...) }

// WriteModule writes the runtime into dir as ModuleFile and returns the
// file's path, ready to be listed in a runtime_env's py_modules.
func WriteModule(dir string) (string, error) {
	path := filepath.Join(dir, ModuleFile)
	if err := os.WriteFile(path, module, 0o644); err != nil {
		return "", fmt.Errorf("rayruntime: writing the runtime module: %w", err)
	}
	return path, nil
}
