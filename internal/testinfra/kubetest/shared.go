package kubetest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// One control plane serves every test of a test binary: starting one costs
// seconds, and tests stay apart by namespace. A second one, whose pods run
// for real, serves the tests that need Ray inside the pods (SharedPods).
type lazyEnv struct {
	once sync.Once
	env  *Env
	err  error
	took time.Duration
}

var shared, sharedPods lazyEnv

// get starts the control plane with opts on first use; one that cannot
// start fails tb (it never skips).
func (l *lazyEnv) get(tb testing.TB, opts ...Option) *Env {
	tb.Helper()
	l.once.Do(func() {
		start := time.Now()
		l.env, l.err = Start(context.Background(), opts...)
		l.took = time.Since(start)
	})
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l.env
}

// Shared returns the test binary's control plane, starting it on first
// use; a test binary that calls it runs its tests through Main. A control
// plane that cannot start fails tb (it never skips).
func Shared(tb testing.TB) *Env {
	tb.Helper()
	return shared.get(tb)
}

// StartDuration is how long the shared control plane took to start (0
// before it started).
func StartDuration() time.Duration { return shared.took }

// SharedPods returns the test binary's control plane whose pods run for
// real, started on first use and stopped by Main: a pod runner
// (WithPodRunner) with its default node and SharedTPUNodes,
// kube-controller-manager (WithControllerManager) and object storage
// (WithObjectStorage: Env.Storage). Its tests share the
// machine's CPUs with every Ray pod they start. It needs root.
func SharedPods(tb testing.TB) *Env {
	tb.Helper()
	nodes := append([]podrunner.Node{{Name: "podrunner"}}, SharedTPUNodes...)
	return sharedPods.get(tb, WithPodRunner(podrunner.Options{Nodes: nodes}), WithControllerManager(), WithObjectStorage())
}

// SharedTPUNodes are SharedPods' GKE TPU node pools: v4 2x2x2.
var SharedTPUNodes = []podrunner.Node{podrunner.TPUNode("tpu-v4-2x2x2", "tpu-v4-podslice", "2x2x2")}

// SharedPodsStartDuration is how long SharedPods' control plane took to
// start (0 before it started).
func SharedPodsStartDuration() time.Duration { return sharedPods.took }

// Main runs m and then stops the shared control planes that started:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	for _, l := range []*lazyEnv{&sharedPods, &shared} {
		if l.env == nil {
			continue
		}
		if err := l.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "kubetest: stopping the control plane:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

var nsSeq atomic.Int64

// Namespace creates a fresh namespace for tb. Namespaces are not deleted:
// without a kube-controller-manager a namespace would stay Terminating,
// and the control plane goes away with the test binary.
func (e *Env) Namespace(tb testing.TB) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%d-%d", os.Getpid()%10000, nsSeq.Add(1))}}
	if err := e.Client.Create(tb.Context(), ns); err != nil {
		tb.Fatalf("kubetest: creating namespace %s: %v", ns.Name, err)
	}
	if e.controllers != nil {
		if err := e.waitDefaultServiceAccount(tb.Context(), ns.Name); err != nil {
			tb.Fatal(err)
		}
	}
	return ns.Name
}

// waitDefaultServiceAccount waits until the service account controller
// made namespace ns's default ServiceAccount: until then the
// ServiceAccount admission plugin refuses the namespace's pods, as in a
// real cluster.
func (e *Env) waitDefaultServiceAccount(ctx context.Context, ns string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("kubetest: namespace %s's default ServiceAccount: %w", ns, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: namespace %s has no default ServiceAccount after 1m (kube-controller-manager's service account controller makes it): %w", ns, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
