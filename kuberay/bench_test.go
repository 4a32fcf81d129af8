package kuberay_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	k8sfields "k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// benchPlans are 1,000 distinct job plans of four shapes.
func benchPlans(b *testing.B) []*placement.Plan {
	b.Helper()
	shapes := []struct {
		accel, topo string
		slices      int
	}{{"v6e", "4x4", 2}, {"v4", "2x2x2", 1}, {"v5e", "4x8", 3}, {"v6e", "2x4", 1}}
	plans := make([]*placement.Plan, 1000)
	for i := range plans {
		s := shapes[i%len(shapes)]
		tr := trainer(s.accel, s.topo, s.slices)
		tr.RunConfig.Name = fmt.Sprintf("run-%04d", i)
		p, err := tr.Compile()
		if err != nil {
			b.Fatal(err)
		}
		plans[i] = p
	}
	return plans
}

// One op renders one RayJob (validated); run with -benchtime=1000x for
// the 1,000 RayJobs of the issue: go test ./kuberay -run '^$'
// -bench 'BenchmarkRender' -benchtime=1000x -benchmem
func BenchmarkRender(b *testing.B) {
	plans := benchPlans(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := kuberay.RenderJob(plans[i%len(plans)], kuberay.Options{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// Render and print as YAML, as raytpu render does.
func BenchmarkRenderYAML(b *testing.B) {
	plans := benchPlans(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		job, err := kuberay.RenderJob(plans[i%len(plans)], kuberay.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kuberay.MarshalYAML(job); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// firstStatus watches RayJob name until the operator writes its first
// deployment status.
func firstStatus(ctx context.Context, b *testing.B, c rayclient.Interface, ns, name string) {
	lw := cache.NewListWatchFromClient(c.RayV1().RESTClient(), "rayjobs", ns, k8sfields.OneTermEqualSelector("metadata.name", name))
	_, err := watchtools.UntilWithSync(ctx, lw, &rayv1.RayJob{}, nil, func(ev watch.Event) (bool, error) {
		job, ok := ev.Object.(*rayv1.RayJob)
		return ok && job.Status.JobDeploymentStatus != "", nil
	})
	if err != nil {
		b.Fatalf("RayJob %s/%s: no status: %v", ns, name, err)
	}
}

// One op: render and server-side apply a RayJob with raytpu, then watch it
// until the real operator writes its first status (Initializing):
// go test ./kuberay -run '^$' -bench 'BenchmarkApplyToFirstStatus' -benchtime=10x
func BenchmarkApplyToFirstStatus(b *testing.B) {
	env := kubetest.Shared(b)
	ns := env.Namespace(b)
	be, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		b.Fatal(err)
	}
	c, err := rayclient.NewForConfig(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	tr := trainer("v6e", "2x4", 1)
	p, err := tr.Compile()
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("bench-%d", i)
		i++
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		if _, err := be.Apply(ctx, p, name); err != nil {
			b.Fatal(err)
		}
		firstStatus(ctx, b, c, ns, name)
		cancel()
	}
}

// The same with `kubectl apply --server-side` of the YAML raytpu renders
// (the kubectl binary scripts/setup-kube.sh kubectl builds, one process
// per apply, as a script would run it):
// go test ./kuberay -run '^$' -bench 'BenchmarkKubectlApplyToFirstStatus' -benchtime=10x
func BenchmarkKubectlApplyToFirstStatus(b *testing.B) {
	env := kubetest.Shared(b)
	kubectl := filepath.Join(env.Assets.Dir, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		b.Fatalf("kubectl is not built (%v): run scripts/setup-kube.sh kubectl", err)
	}
	ns := env.Namespace(b)
	kubeconfig := env.WriteKubeconfig(b, ns)
	c, err := rayclient.NewForConfig(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	tr := trainer("v6e", "2x4", 1)
	p, err := tr.Compile()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("kubectl-%d", i)
		i++
		job, err := kuberay.RenderJob(p, kuberay.Options{Namespace: ns}, kuberay.RenderInput{Name: name})
		if err != nil {
			b.Fatal(err)
		}
		y, err := kuberay.MarshalYAML(job)
		if err != nil {
			b.Fatal(err)
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, y, 0o644); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		if out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--field-manager", kuberay.FieldManager, "-f", file).CombinedOutput(); err != nil {
			b.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		firstStatus(ctx, b, c, ns, name)
		cancel()
	}
}
