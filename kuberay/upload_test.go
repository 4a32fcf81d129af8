package kuberay_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/gcsemu"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/runtimeenv"
)

// A working_dir too large for a ConfigMap goes to Options.PackageBucket:
// Render names it in runtime_env by its gs:// URI, content-addressed as
// Ray names its packages, with no ConfigMap and no mount; Manifests.Upload
// writes it to the bucket (a GCS emulator, found through
// STORAGE_EMULATOR_HOST as Google's clients find one) and, run again as a
// retry is, finds the object there and writes nothing.
func TestWorkingDirTooLargeForAConfigMapIsUploadedOnce(t *testing.T) {
	emu, err := gcsemu.Start("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Stop() })
	t.Setenv(gcsemu.EnvHost, emu.URL())
	emu.CreateBucket("code")

	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "train_loop.py"), []byte("def train_func(config):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3<<19) // 1.5 MiB that does not compress
	rand.Read(big)
	if err := os.WriteFile(filepath.Join(work, "weights.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := trainer("v4", "2x2x2", 1)
	tr.RuntimeEnv = runtimeenv.RuntimeEnv{WorkingDir: work}
	p := compile(t, tr)

	var list field.ErrorList
	if _, err := kuberay.Render(p, kuberay.Options{}, kuberay.RenderInput{}); !errors.Is(err, kuberay.ErrLocalWorkingDir) ||
		!errors.As(err, &list) || len(list) != 1 || list[0].Field != "plan.job.runtimeEnv.workingDir" {
		t.Fatalf("Render without a bucket: %v, want ErrLocalWorkingDir at plan.job.runtimeEnv.workingDir", err)
	}
	m, err := kuberay.Render(p, kuberay.Options{PackageBucket: "gs://code/runs"}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ConfigMaps) != 0 {
		t.Errorf("%d ConfigMaps rendered, want none: the working_dir is in the bucket", len(m.ConfigMaps))
	}
	env := *m.Job.Spec.RuntimeEnvYAML
	i := strings.Index(env, "gs://code/runs/_ray_pkg_")
	if i < 0 || strings.Contains(env, kuberay.WorkingDirMountPath) {
		t.Fatalf("runtime_env %q, want working_dir gs://code/runs/_ray_pkg_<hash>.zip", env)
	}
	uri := strings.Fields(env[i:])[0]
	if !strings.HasSuffix(uri, ".zip") || len(uri) != len("gs://code/runs/_ray_pkg_")+16+len(".zip") {
		t.Errorf("working_dir %q, want Ray's package name _ray_pkg_<16 hex digits>.zip", uri)
	}

	wrote, err := m.Upload(t.Context())
	if err != nil || len(wrote) != 1 || wrote[0] != uri {
		t.Fatalf("first Upload wrote %v (%v), want %s", wrote, err, uri)
	}
	objs, err := emu.List("code", "runs/")
	if err != nil || len(objs) != 1 || objs[0].Size < int64(len(big)) {
		t.Fatalf("bucket holds %+v (%v), want the one package of at least %d bytes", objs, err, len(big))
	}
	again, err := kuberay.Render(p, kuberay.Options{PackageBucket: "gs://code/runs"}, kuberay.RenderInput{})
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := again.Upload(t.Context()); err != nil || len(wrote) != 0 {
		t.Errorf("second Upload wrote %v (%v), want nothing: the object is there", wrote, err)
	}
	after, _ := emu.List("code", "runs/")
	if len(after) != 1 || after[0].Generation != objs[0].Generation {
		t.Errorf("after the retry the bucket holds %+v, want the first upload %+v untouched", after, objs)
	}
}

// PackageBucket must be a gs:// bucket.
func TestPackageBucketIsChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"code", "gs://", "gs://UPPER", "gs://b/a//b", "s3://code"} {
		var list field.ErrorList
		err := kuberay.CheckOptions(kuberay.Options{PackageBucket: bad})
		if !errors.As(err, &list) || len(list) != 1 || list[0].Field != "options.packageBucket" || list[0].Type != field.TypeInvalid {
			t.Errorf("PackageBucket %q: %v, want one Invalid error at options.packageBucket", bad, err)
		}
	}
	for _, good := range []string{"gs://code", "gs://code/", "gs://my.code_bucket/team/runs"} {
		if err := kuberay.CheckOptions(kuberay.Options{PackageBucket: good}); err != nil {
			t.Errorf("PackageBucket %q: %v", good, err)
		}
	}
}
