package kuberay_test

import (
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// The KubeRay backend passes the backend contract's conformance suite on
// the real apiserver with the real KubeRay operator, each rule in a
// namespace of its own. No Ray runs in the pods: a RayJob ends FAILED when
// its 30 s deadline passes, and a RayService stays DEPLOYING, so the
// backend is a control plane only (see backendtest.Backend).
func TestConformance(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	backendtest.Run(t, func(t *testing.T) backendtest.Backend {
		ns := env.Namespace(t)
		b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns, ActiveDeadline: 30 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		return backendtest.Backend{
			Name: kuberay.Name, Runner: b, Server: b,
			KeepsRuns: true, ControlPlaneOnly: true, Patience: 20 * time.Second,
		}
	})
}
