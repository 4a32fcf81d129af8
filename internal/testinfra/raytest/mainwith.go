package raytest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/sim"
)

// MainWith is [Main] with a hook that adjusts the cluster's config before
// it starts (configure may be nil), for example to put directories on the
// nodes' PYTHONPATH with Config.AddPythonPath.
func MainWith(m *testing.M, spec string, configure func(*raycluster.Config), started func(*raycluster.Cluster)) int {
	s, err := sim.ParseSpec(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := raycluster.Config{Nodes: raycluster.NodesFor(s, 1)}
	if configure != nil {
		configure(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := raycluster.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "these tests need a local Ray cluster posing as %s: %v\n", spec, err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop local Ray cluster:", err)
		}
	}()
	started(c)
	code := m.Run()
	if code != 0 {
		// What the head's dashboard saw: a Jobs or Serve API answer the
		// tests could not explain often has its cause only here.
		fmt.Fprintf(os.Stderr, "the tests failed; the head's dashboard logs:\n%s", c.DashboardLogTail(40))
	}
	return code
}
