package kubetest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// A missing Kueue binary fails StartKueue (and so SharedKueue's test) with
// the command that builds it, before anything is installed.
func TestMissingKueueNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	e := &kubetest.Env{Assets: kubetest.Assets{Dir: dir, Kueue: filepath.Join(dir, "kueue"), KueueCRDs: filepath.Join(dir, "kueue-crds")}}
	err := e.StartKueue(t.Context())
	if err == nil {
		t.Fatal("StartKueue started without a binary")
	}
	for _, want := range []string{"Kueue's controller binary", "scripts/setup-kube.sh", kubetest.KueueVersion} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
