package ray_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/ray"
)

// One head-only Ray cluster serves every test of the package that needs a
// real dashboard. It starts on first use and stops when the tests end.
var (
	clusterOnce sync.Once
	cluster     *raycluster.Cluster
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop local Ray cluster:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// realCluster returns the shared cluster, starting it if needed. A missing
// Ray fails the test with instructions; it does not skip.
func realCluster(t testing.TB) *raycluster.Cluster {
	t.Helper()
	clusterOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cluster, clusterErr = raycluster.Start(ctx, raycluster.Config{HeadCPUs: 2})
	})
	if clusterErr != nil {
		t.Fatalf("this test needs a local Ray cluster: %v", clusterErr)
	}
	return cluster
}

// realClient returns a client of the shared cluster's dashboard.
func realClient(t testing.TB, opts ...ray.Option) *ray.Client {
	t.Helper()
	c := realCluster(t)
	cl, err := ray.NewClient(c.DashboardURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// venvPython returns the project virtualenv's python.
func venvPython(t testing.TB) string {
	t.Helper()
	venv, err := raycluster.FindVenv("")
	if err != nil {
		t.Fatalf("this test needs Ray's Python package: %v", err)
	}
	return filepath.Join(venv, "bin", "python")
}
