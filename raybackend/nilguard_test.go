package raybackend_test

import (
	"errors"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/raybackend"
)

// Every exported method of a nil *Backend, and of a Backend not made by
// New, returns an error matching backend.ErrNilBackend instead of
// panicking. No cluster is needed: nothing is sent.
func TestNilBackendMethods(t *testing.T) {
	t.Parallel()
	plan := backendtest.JobPlan("nil", placement.KindJaxTrainer)
	for name, b := range map[string]*raybackend.Backend{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			calls := map[string]func() error{
				"Run":      func() error { _, err := b.Run(ctx, plan, backend.RunOptions{}); return err },
				"Submit":   func() error { _, err := b.Submit(ctx, plan, backend.RunOptions{}); return err },
				"WaitRun":  func() error { _, err := b.WaitRun(ctx, "x", backend.RunOptions{}); return err },
				"Deploy":   func() error { _, err := b.Deploy(ctx, plan); return err },
				"Wait":     func() error { _, err := b.Wait(ctx, "x", backend.WaitOptions{}); return err },
				"Status":   func() error { _, err := b.Status(ctx, "x"); return err },
				"Delete":   func() error { return b.Delete(ctx, "x") },
				"Diagnose": func() error { _, err := b.Diagnose(ctx, "x"); return err },
			}
			for m, call := range calls {
				if err := call(); !errors.Is(err, backend.ErrNilBackend) {
					t.Errorf("%s on a %s *Backend = %v, want an error matching backend.ErrNilBackend", m, name, err)
				}
			}
		})
	}
}
