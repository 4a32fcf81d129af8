package kubetest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// One control plane serves every test of a test binary: starting one costs
// seconds, and tests stay apart by namespace.
var shared struct {
	once sync.Once
	env  *Env
	err  error
	took time.Duration
}

// Shared returns the test binary's control plane, starting it on first
// use; a test binary that calls it runs its tests through Main. A control
// plane that cannot start fails tb (it never skips).
func Shared(tb testing.TB) *Env {
	tb.Helper()
	shared.once.Do(func() {
		start := time.Now()
		shared.env, shared.err = Start(context.Background())
		shared.took = time.Since(start)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.env
}

// StartDuration is how long the shared control plane took to start (0
// before it started).
func StartDuration() time.Duration { return shared.took }

// Main runs m and then stops the shared control plane, if one started:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
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
	return ns.Name
}
