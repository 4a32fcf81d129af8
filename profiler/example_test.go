package profiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/profiler"
)

// Parse summarises an .xplane.pb file per plane; this one holds a few
// events of a jitted step captured from CPU JAX.
func ExampleParse() {
	b, err := os.ReadFile("testdata/jit_step.xplane.pb")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := profiler.Parse(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range s.Planes {
		fmt.Printf("%s: %d lines, %d events\n", p.Name, p.Lines, p.Events)
		for _, c := range p.EventCounts {
			fmt.Printf("  %s x%d\n", c.Name, c.Count)
		}
	}
	fmt.Println("check:", s.Check())
	// Output:
	// /host:CPU: 1 lines, 3 events
	//   ParseArguments x1
	//   PjitFunction(raytpu_step) x2
	// Task Environment: 0 lines, 0 events
	// check: <nil>
}

// A Trace (from Capture) goes where TensorBoard and XProf look for it.
func ExampleTrace_WriteLogDir() {
	b, _ := os.ReadFile("testdata/jit_step.xplane.pb")
	s, _ := profiler.Parse(b)
	tr := &profiler.Trace{Host: "worker-0", XSpace: b, Summary: s}
	logdir, _ := os.MkdirTemp("", "logdir")
	defer os.RemoveAll(logdir)
	path, err := tr.WriteLogDir(logdir, profiler.RunName(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(logdir, path)
	fmt.Println(filepath.ToSlash(rel))
	// Output:
	// plugins/profile/2026_01_02_03_04_05/worker-0.xplane.pb
}

// Options are checked before anything is sent; every bad field is named.
func ExampleOptions_Validate() {
	level := 7
	err := profiler.Options{Duration: 0, HostTracerLevel: &level}.Validate(field.NewPath("profile"))
	for _, e := range field.Errors(err) {
		fmt.Println(e.Field, e.Type)
	}
	// Output:
	// profile.duration Invalid
	// profile.hostTracerLevel NotSupported
}
