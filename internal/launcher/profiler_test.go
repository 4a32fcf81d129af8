package launcher_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/launcher"
	"github.com/raytpu/raytpu/profiler"
)

// The launcher prints the profiler server lines with the prefix that
// profiler.ServersFromLog reads, and reads the port where train's
// LauncherRun puts it.
func TestProfilerProtocol(t *testing.T) {
	t.Parallel()
	src := string(launcher.Script())
	for _, want := range []string{
		fmt.Sprintf("PROFILER_PREFIX = %q", profiler.ServerPrefix),
		`run.get("profiler")`,
		`run["profiler"]["port"]`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the launcher lacks %s", want)
		}
	}
}
