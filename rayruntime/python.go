package rayruntime

import (
	"embed"
	"path"
)

// python holds the Python sources, as shipped; their unit tests
// (python/test_*.py) are not shipped.
//
//go:embed python/_raytpu_launcher.py python/_raytpu_recorder.py python/_raytpu_runtime.py python/raytpu_replica/__init__.py python/raytpu_replica/_reservation.py
var python embed.FS

// source returns a fresh copy of the embedded Python file name (a path
// under python/).
func source(name string) []byte {
	b, err := python.ReadFile(path.Join("python", name))
	if err != nil {
		panic("rayruntime: " + name + " is not embedded: " + err.Error()) // a build defect, not user input
	}
	return b
}
