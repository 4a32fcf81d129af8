package cli_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// raytpu apply --wait on a RayCluster, against the apiserver with the real
// KubeRay controllers (the test environment marks the pods KubeRay creates
// ready): the object kubectl-style and its head service first, then
// KubeRay's state and the worker pods ready of desired as timestamped
// lines, until KubeRay reports the cluster ready.
func TestApplyWaitCommandOnKube(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	kubeconfig := env.WriteKubeconfig(t, ns)
	args := []string{"apply", "--wait", "--timeout", "2m", "-f", filepath.Join("testdata", "plan-v4-per-slice.json"), "--kubeconfig", kubeconfig}
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), args, &stdout, &stderr)
	t.Logf("raytpu %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	if code != cli.ExitOK {
		t.Fatalf("exit %d, want %d", code, cli.ExitOK)
	}
	want := []string{
		`^RayCluster ` + ns + `/t applied \(uid `,
		`^\S+Z resource: raycluster/t in namespace ` + ns + `$`,
		`^\S+Z dashboard: http://t-head-svc\.` + ns + `\.svc:8265 `,
		`^\S+Z provisioning$`,
		`^\S+Z workers ready [0-3]/4`,
		`^\S+Z ready \(after (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s) in provisioning\)$`,
		`^\S+Z workers ready 4/4$`,
		`^\S+Z ready in (?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+(?:ms|µs|s)$`,
	}
	lines := strings.Split(stdout.String(), "\n")
	i := 0
	for _, l := range lines {
		if i < len(want) && regexp.MustCompile(want[i]).MatchString(l) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no line matches %q (after the earlier ones)", want[i])
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want it empty", stderr.String())
	}
}
