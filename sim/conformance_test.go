package sim_test

import (
	"testing"

	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/sim"
)

// The simulator passes the backend contract's conformance suite, as a
// Runner and a Server, on a fresh cluster per rule with the v4-8 host the
// suite's job plans hold.
func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Backend {
		c := newCluster(t, "v4-8,cpu:1")
		return backendtest.Backend{Name: sim.BackendName, Runner: c, Server: c}
	})
}
