package kuberay_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/gcsemu"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/testinfra/traintest"
)

// Pods share no disk: what the pods of a run write for the test
// (testdata/trainloop's reports, Ray Train's checkpoints) goes to object
// storage, the control plane's GCS emulator (kubetest.WithObjectStorage),
// and the test reads it from there.

var bucketSeq atomic.Int64

// gsDir makes a fresh bucket in env's object storage and returns a
// directory in it, gs://<bucket>/<name>; pattern names the bucket.
func gsDir(t *testing.T, env *kubetest.Env, pattern, name string) string {
	t.Helper()
	if env.Storage == nil {
		t.Fatal("the control plane has no object storage: start it with kubetest.WithObjectStorage (SharedPods does)")
	}
	bucket := fmt.Sprintf("%s%d-%d", pattern, os.Getpid()%10000, bucketSeq.Add(1))
	env.Storage.CreateBucket(bucket)
	return "gs://" + bucket + "/" + name
}

// readGS reads object uri (gs://bucket/object) from env's object storage.
func readGS(env *kubetest.Env, uri string) ([]byte, error) {
	return env.Storage.ReadURI(uri)
}

// listGS returns the URIs of the objects directly in directory dir
// (gs://bucket/prefix) whose names begin with base, sorted.
func listGS(t *testing.T, env *kubetest.Env, dir, base string) []string {
	t.Helper()
	bucket, prefix, err := gcsemu.Split(strings.TrimSuffix(dir, "/") + "/" + base)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := env.Storage.List(bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		if path.Dir(o.Name) == path.Dir(prefix) {
			out = append(out, "gs://"+bucket+"/"+o.Name)
		}
	}
	return out
}

// registeredCheckpointStep is traintest.RegisteredCheckpointStep of run
// directory runDir in object storage.
func registeredCheckpointStep(env *kubetest.Env, runDir string) (int, bool) {
	b, err := readGS(env, strings.TrimSuffix(runDir, "/")+"/"+traintest.SnapshotFile)
	if err != nil {
		return 0, false
	}
	return traintest.SnapshotStep(b)
}

// bigFile writes size random bytes (which do not compress) to dir/name.
func bigFile(t *testing.T, dir, name string, size int) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkUploadedWorkingDir checks that a run's working_dir went to
// directory dir of env's object storage (Options.PackageBucket): one
// package of more than minSize bytes, named as Ray names its packages,
// which the runtime_env (YAML) names.
func checkUploadedWorkingDir(t *testing.T, env *kubetest.Env, dir, runtimeEnv string, minSize int64) {
	t.Helper()
	pkgs := listGS(t, env, dir, "_ray_pkg_")
	if len(pkgs) != 1 || !strings.HasSuffix(pkgs[0], ".zip") || !strings.Contains(runtimeEnv, pkgs[0]) {
		t.Errorf("packages in %s: %v, want one _ray_pkg_<hash>.zip named by the runtime_env %q", dir, pkgs, runtimeEnv)
		return
	}
	b, err := readGS(env, pkgs[0])
	if err != nil || int64(len(b)) <= minSize {
		t.Errorf("package %s: %d bytes (%v), want more than %d", pkgs[0], len(b), err, minSize)
		return
	}
	t.Logf("working_dir uploaded as %s (%d bytes), named by the RayJob's runtime_env", pkgs[0], len(b))
}
