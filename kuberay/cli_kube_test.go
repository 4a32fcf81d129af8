package kuberay_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// cliTestdata holds the raytpu command's workload files and the golden
// output of raytpu render.
const cliTestdata = "../internal/cli/testdata"

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

// raytpu apply with a kubeconfig file: the namespace comes from its
// context, the object is created once, and a second apply changes nothing.
func TestApplyCommand(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	kubeconfig := env.WriteKubeconfig(t, ns)
	args := []string{"apply", "-f", filepath.Join(cliTestdata, "apps", "chat.yaml"), "--kubeconfig", kubeconfig}
	var outs []string
	for range 2 {
		var stdout, stderr bytes.Buffer
		if code := cli.Main(t.Context(), args, &stdout, &stderr); code != cli.ExitOK {
			t.Fatalf("raytpu %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		outs = append(outs, stdout.String())
	}
	if !strings.HasPrefix(outs[0], "RayService "+ns+"/chat applied (uid ") || outs[1] != outs[0] {
		t.Errorf("outputs %q, want the same RayService %s/chat twice", outs, ns)
	}
	var stdout, stderr bytes.Buffer
	dry := []string{"apply", "--dry-run", "-f", filepath.Join(cliTestdata, "plan-v4-per-slice.json"), "--kubeconfig", kubeconfig}
	if code := cli.Main(t.Context(), dry, &stdout, &stderr); code != cli.ExitOK || !strings.Contains(stdout.String(), "RayCluster "+ns+"/t applied (server dry run") {
		t.Errorf("raytpu %s: exit %d: %s%s", strings.Join(dry, " "), code, stdout.String(), stderr.String())
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "t"}, &rayv1.RayCluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("RayCluster t after a dry run: %v, want NotFound", err)
	}
	var svcs rayv1.RayServiceList
	if err := env.Client.List(t.Context(), &svcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(svcs.Items) != 1 || !strings.Contains(outs[0], string(svcs.Items[0].UID)) {
		t.Errorf("%d RayServices; want exactly the one raytpu apply named", len(svcs.Items))
	}
}
