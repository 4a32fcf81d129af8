package kuberay_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/runtimeenv"
)

// A run of more than one host whose StoragePath is a local directory is
// refused by Render and by Apply before anything is packed or created,
// naming trainer.run_config.storage_path; object storage, a directory
// declared a shared mount (which the plan then says) and a run of one
// host are accepted.
func TestLocalStorageOfAMultiHostRunIsRefused(t *testing.T) {
	t.Parallel()
	const storagePath = "trainer.run_config.storage_path"
	for _, tc := range []struct {
		name        string
		accel, topo string
		slices      int
		storage     string
		shared      bool
		refused     bool
	}{
		{name: "one slice of two hosts, local", accel: "v4", topo: "2x2x2", slices: 1, storage: "/mnt/results", refused: true},
		{name: "two single-host slices, local", accel: "v6e", topo: "2x4", slices: 2, storage: "results", refused: true},
		{name: "two slices, gs://", accel: "v4", topo: "2x2x2", slices: 2, storage: "gs://bucket/results"},
		{name: "two slices, a declared shared mount", accel: "v4", topo: "2x2x2", slices: 2, storage: "/mnt/filestore/results", shared: true},
		{name: "one single-host slice, local", accel: "v6e", topo: "2x4", slices: 1, storage: "/mnt/results"},
		{name: "two slices, no storage path", accel: "v4", topo: "2x2x2", slices: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := trainer(tc.accel, tc.topo, tc.slices)
			tr.RunConfig.StoragePath = tc.storage
			tr.RunConfig.StorageSharedMount = tc.shared
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "train_loop.py"), []byte("def train_func(config):\n    pass\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tr.RuntimeEnv = runtimeenv.RuntimeEnv{WorkingDir: work}
			p := compile(t, tr)
			if tc.shared && (p.Job.Storage == nil || !p.Job.Storage.SharedMount || p.Job.Storage.Path != tc.storage) {
				t.Errorf("plan storage %+v, want %s declared a shared mount", p.Job.Storage, tc.storage)
			}
			_, rerr := kuberay.Render(p, kuberay.Options{}, kuberay.RenderInput{})
			ray, kube := rayfake.NewSimpleClientset(), k8sfake.NewSimpleClientset()
			b, err := kuberay.NewWithClient(ray, kuberay.WithKubeClient(kube))
			if err != nil {
				t.Fatal(err)
			}
			_, aerr := b.Apply(t.Context(), p, "run")
			for call, err := range map[string]error{"Render": rerr, "Apply": aerr} {
				if !tc.refused {
					// The fake clientset cannot server-side apply: an
					// accepted plan gets that far.
					if err != nil && (call == "Render" || errors.Is(err, backend.ErrInvalidPlan)) {
						t.Errorf("%s: %v, want it accepted", call, err)
					}
					continue
				}
				var list field.ErrorList
				if !errors.Is(err, backend.ErrInvalidPlan) || !errors.As(err, &list) || len(list) != 1 ||
					list[0].Field != storagePath || list[0].Type != field.TypeInvalid || list[0].BadValue != tc.storage {
					t.Errorf("%s: %v, want ErrInvalidPlan with one Invalid error at %s for %q", call, err, storagePath, tc.storage)
				}
			}
			if !tc.refused {
				return
			}
			jobs, _ := ray.RayV1().RayJobs("default").List(t.Context(), metav1.ListOptions{})
			cms, _ := kube.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
			if len(jobs.Items)+len(cms.Items) != 0 {
				t.Errorf("a refused Apply created %d RayJobs and %d ConfigMaps", len(jobs.Items), len(cms.Items))
			}
		})
	}
}

// StorageSharedMount needs a local StoragePath.
func TestStorageSharedMountNeedsALocalPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		storage, path string
		typ           field.Type
	}{
		{"", "trainer.run_config.storage_path", field.TypeRequired},
		{"gs://bucket/results", "trainer.run_config.storage_shared_mount", field.TypeInvalid},
	} {
		tr := trainer("v4", "2x2x2", 1)
		tr.RunConfig.StoragePath, tr.RunConfig.StorageSharedMount = tc.storage, true
		_, err := tr.Compile()
		var list field.ErrorList
		if !errors.As(err, &list) || len(list) != 1 || list[0].Field != tc.path || list[0].Type != tc.typ {
			t.Errorf("storage %q declared a shared mount: %v, want one %s error at %s", tc.storage, err, tc.typ, tc.path)
		}
	}
}
