package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// raytpu apply --ray-cluster reads the existing RayCluster's TPU worker
// groups from the apiserver and predicts, as raytpu plan does, what Ray's
// autoscaler does for the job before it creates anything: a two-slice v6e
// 4x4 job on a cluster whose v6e 4x4 group is autoscaled to at most one
// slice is refused (MaxSlicesTooSmall, naming the flag and the cluster)
// and no RayJob exists; on a cluster whose group may grow to two it
// passes a server dry run, saying the group scales from 0 to 2 slices; a
// v4 cluster offers no v6e slice (NoGroupOffersSlice); a cluster that
// does not exist is named.
func TestApplyOnExistingClusterPredictsTheAutoscaler(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	kubeconfig := env.WriteKubeconfig(t, ns)
	up := func(name, accel, topology string, maxSlices int) {
		t.Helper()
		sl, err := placement.SliceSpec{Accelerator: accel, Topology: topology}.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns,
			Autoscaling: &kuberay.Autoscaling{MinSlices: 0, MaxSlices: maxSlices}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Up(t.Context(), placement.NewSlicePlan(name, sl)); err != nil {
			t.Fatal(err)
		}
	}
	up("small", "v6e", "4x4", 1)
	up("large", "v6e", "4x4", 2)
	up("other", "v4", "2x2x2", 2)

	plan := filepath.Join("testdata", "plans", "jaxtrain-v6e-two-slices.json")
	apply := func(cluster string, extra ...string) (string, string, int) {
		return run(t, append([]string{"apply", "-f", plan, "--kubeconfig", kubeconfig, "--name", "two-" + cluster, "--ray-cluster", cluster}, extra...)...)
	}

	out, errOut, code := apply("small")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "--ray-cluster small: RayCluster "+ns+"/small cannot run plan") ||
		!strings.Contains(errOut, "MaxSlicesTooSmall") || !strings.Contains(out, "scales from 0 to 1 slice") {
		t.Errorf("two slices on a group of at most one: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, MaxSlicesTooSmall named, the prediction printed", code, out, errOut, cli.ExitInvalid)
	}
	var jobs rayv1.RayJobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d RayJobs after a refused apply, want none", len(jobs.Items))
	}

	out, errOut, code = apply("large", "--dry-run")
	if code != cli.ExitOK || !strings.Contains(out, "items[0] group v6e-16: v6e-16 4x4, 0 slices (min 0, max 2)") ||
		!strings.Contains(out, "scales from 0 to 2 slices (0 to 8 pods)") || !strings.Contains(out, "RayJob "+ns+"/two-large applied (server dry run") {
		t.Errorf("two slices on a group of at most two: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	_, errOut, code = apply("other", "--dry-run")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "NoGroupOffersSlice") {
		t.Errorf("v6e slices on a v4 cluster: exit %d, stderr %q; want NoGroupOffersSlice", code, errOut)
	}

	_, errOut, code = apply("missing", "--dry-run")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "reading RayCluster "+ns+"/missing") || !strings.Contains(errOut, "not found") {
		t.Errorf("a RayCluster that does not exist: exit %d, stderr %q", code, errOut)
	}
}
