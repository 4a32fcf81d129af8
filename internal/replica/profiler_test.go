package replica_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/internal/replica"
	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/serve"
)

// The replica runtime reads the profiler config under serve.ProfilerKey
// and prints the lines profiler.HostServersFromLog reads.
func TestProfilerProtocol(t *testing.T) {
	t.Parallel()
	src := replica.Module()
	for _, want := range []string{
		fmt.Sprintf("PROFILER_KEY = %q", serve.ProfilerKey),
		fmt.Sprintf("PROFILER_PREFIX = %q", profiler.ServerPrefix),
	} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the runtime lacks %s", want)
		}
	}
}
