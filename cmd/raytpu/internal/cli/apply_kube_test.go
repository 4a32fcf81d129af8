package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// raytpu apply with a kubeconfig file: the namespace comes from its
// context, the object is created once, and a second apply changes nothing.
func TestApplyCommandOnKube(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	kubeconfig := env.WriteKubeconfig(t, ns)
	args := []string{"apply", "-f", filepath.Join("testdata", "apps", "chat.yaml"), "--kubeconfig", kubeconfig}
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
	dry := []string{"apply", "--dry-run", "-f", filepath.Join("testdata", "plan-v4-per-slice.json"), "--kubeconfig", kubeconfig}
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
