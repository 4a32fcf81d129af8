package kuberay_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/gobin"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// The example programs switch to KubeRay with one flag: built and run with
// --backend kuberay against the real apiserver, jaxtrain creates its
// RayJob and serve its RayService, each with its local code in a
// ConfigMap (and the RayService, whose replicas own TPU slices, with the
// replica runtime in another). Nothing runs in the pods here, so the programs would wait
// for ever; the test stops them once the objects exist.
func TestExamplesOnKubeRay(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	bin := t.TempDir()
	for _, ex := range []string{"jaxtrain", "serve"} {
		gobin.Build(t, filepath.Join(bin, ex), "../examples/"+ex)
	}
	cases := []struct {
		example string
		object  client.Object
		name    string
		cms     int
	}{
		{"jaxtrain", &rayv1.RayJob{}, "", 1},
		{"serve", &rayv1.RayService{}, "linear", 2},
	}
	for _, c := range cases {
		t.Run(c.example, func(t *testing.T) {
			ns := env.Namespace(t)
			cmd := exec.Command(filepath.Join(bin, c.example), "--backend", "kuberay", "--kubeconfig", env.WriteKubeconfig(t, "default"), "--namespace", ns)
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-done
			})
			waitFor(t, 2*time.Minute, "the example's KubeRay object and its ConfigMaps", func() (bool, string) {
				select {
				case err := <-done:
					done <- err // for the cleanup
					t.Fatalf("examples/%s exited (%v): %s", c.example, err, out.String())
				default:
				}
				var cms corev1.ConfigMapList
				if err := env.Client.List(t.Context(), &cms, client.InNamespace(ns), client.MatchingLabels{kuberay.LabelManagedBy: kuberay.FieldManager}); err != nil {
					t.Fatal(err)
				}
				var n int
				switch c.object.(type) {
				case *rayv1.RayJob:
					var l rayv1.RayJobList
					if err := env.Client.List(t.Context(), &l, client.InNamespace(ns)); err != nil {
						t.Fatal(err)
					}
					n = len(l.Items)
				case *rayv1.RayService:
					var l rayv1.RayServiceList
					if err := env.Client.List(t.Context(), &l, client.InNamespace(ns)); err != nil {
						t.Fatal(err)
					}
					for _, s := range l.Items {
						if s.Name == c.name {
							n++
						}
					}
				}
				return n == 1 && len(cms.Items) == c.cms, fmt.Sprintf("%d objects, %d ConfigMaps; output: %s", n, len(cms.Items), out.String())
			})
		})
	}
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
