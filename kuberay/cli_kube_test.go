package kuberay_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// cliTestdata holds the golden output of raytpu render (the command's own
// tests of raytpu apply against this control plane are in its package).
const cliTestdata = "../cmd/raytpu/internal/cli/testdata"

// What `raytpu render` prints (its golden files) is accepted by the
// apiserver's CRD schema validation and by KubeRay's own validation.
func TestRenderedByTheCommandApply(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	b, err := kuberay.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cliTestdata, "render-*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("golden files of raytpu render: %v (%v)", files, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.ApplyManifest(t.Context(), ns, raw)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if err := kubeRayValidates(out); err != nil {
			t.Errorf("%s: KubeRay's validation: %v", filepath.Base(f), err)
		}
	}
}
