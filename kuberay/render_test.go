package kuberay_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/train"
)

// trainer is a JaxTrainer on slices of the given shape whose code lives at
// a remote working_dir.
func trainer(accel, topo string, slices int) train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"steps": 20},
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: accel, Topology: topo, NumSlices: slices},
		RunConfig:          train.RunConfig{Name: "llama-" + accel, StoragePath: "gs://bucket/results"},
		RuntimeEnv:         runtimeenv.RuntimeEnv{WorkingDir: "gs://bucket/code/loop.zip", EnvVars: map[string]string{"XLA_FLAGS": "--xla_dump_to=/tmp"}},
	}
}

func compile(t *testing.T, tr train.JaxTrainer) *placement.Plan {
	t.Helper()
	p, err := tr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// goldenCases are the plans whose RayJobs are golden files; the kube tests
// apply every one of them for real.
func goldenCases(t *testing.T) map[string]struct {
	plan *placement.Plan
	opts kuberay.Options
	in   kuberay.RenderInput
	wd   *kuberay.WorkingDir
} {
	noWD := trainer("v4", "2x2x2", 1)
	noWD.RuntimeEnv = runtimeenv.RuntimeEnv{}
	onCluster := compile(t, noWD)
	packed, err := kuberay.PackSubmittedWorkingDir(onCluster)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]struct {
		plan *placement.Plan
		opts kuberay.Options
		in   kuberay.RenderInput
		wd   *kuberay.WorkingDir
	}{
		"v6e-4x4-two-slices":  {compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{}, kuberay.RenderInput{Name: "llama-v6e"}, nil},
		"v4-2x2x2-one-slice":  {compile(t, noWD), kuberay.Options{Namespace: "research"}, kuberay.RenderInput{}, nil},
		"v6e-2x4-single-host": {compile(t, trainer("v6e", "2x4", 1)), kuberay.Options{}, kuberay.RenderInput{}, nil},
		"v5e-4x8-own-image":   {compile(t, trainer("v5e", "4x8", 3)), kuberay.Options{Image: "us-docker.pkg.dev/acme/ray:tpu"}, kuberay.RenderInput{}, nil},
		// On an existing RayCluster: code at a remote URI, and the
		// launcher packed into a working_dir that the submitter pod
		// mounts and `ray job submit` uploads.
		"v6e-4x4-on-cluster":         {compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{Cluster: "tpu-pool"}, kuberay.RenderInput{}, nil},
		"v4-2x2x2-on-cluster-packed": {onCluster, kuberay.Options{Cluster: "tpu-pool"}, kuberay.RenderInput{}, packed},
		// Queued with Kueue: label kueue.x-k8s.io/queue-name, suspended.
		"v4-2x2x2-queued": {compile(t, trainer("v4", "2x2x2", 1)), kuberay.Options{Queue: "team-a"}, kuberay.RenderInput{}, nil},
	}
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for name, c := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			job, err := renderGolden(c.plan, c.opts, c.in, c.wd)
			if err != nil {
				t.Fatal(err)
			}
			y, err := kuberay.MarshalYAML(job)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name+".golden.yaml", y)
			again, err := renderGolden(c.plan, c.opts, c.in, c.wd)
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := kuberay.MarshalJSON(job)
			j2, _ := kuberay.MarshalJSON(again)
			if string(j1) != string(j2) {
				t.Error("two renders of one plan differ")
			}
		})
	}
}

// The shape of a two-slice v6e 4x4 job, field by field.
func TestRenderTwoSliceShape(t *testing.T) {
	t.Parallel()
	job, err := kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 2)), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.RayClusterSpec
	if got := *c.HeadGroupSpec.Template.Spec.Containers[0].Image; got != "rayproject/ray:2.60.0-py311" {
		t.Errorf("head image %s", got)
	}
	if n := len(c.WorkerGroupSpecs); n != 1 {
		t.Fatalf("%d worker groups, want 1", n)
	}
	g := c.WorkerGroupSpecs[0]
	if *g.Replicas != 2 || *g.MinReplicas != 2 || *g.MaxReplicas != 2 || *g.NumOfHosts != 4 {
		t.Errorf("replicas %d min %d max %d numOfHosts %d, want 2 2 2 4", *g.Replicas, *g.MinReplicas, *g.MaxReplicas, *g.NumOfHosts)
	}
	ctr := g.Template.Spec.Containers[0]
	if got := *ctr.Image; got != "rayproject/ray:2.60.0-py311-tpu" {
		t.Errorf("worker image %s", got)
	}
	if q := (*ctr.Resources.Limits)["google.com/tpu"]; q.Value() != 4 {
		t.Errorf("google.com/tpu limit %s, want 4", q.String())
	}
	if q := (*ctr.Resources.Requests)["google.com/tpu"]; q.Value() != 4 {
		t.Errorf("google.com/tpu request %s, want 4", q.String())
	}
	sel := g.Template.Spec.NodeSelector
	if sel["cloud.google.com/gke-tpu-accelerator"] != "tpu-v6e-slice" || sel["cloud.google.com/gke-tpu-topology"] != "4x4" {
		t.Errorf("node selector %v", sel)
	}
	if len(ctr.Env) != 1 || *ctr.Env[0].Name != "MEGASCALE_NUM_SLICES" || *ctr.Env[0].Value != "2" {
		t.Errorf("worker env %v, want MEGASCALE_NUM_SLICES=2", ctr.Env)
	}
	if !strings.Contains(*job.Spec.Entrypoint, "_raytpu_launcher.py") || !strings.Contains(*job.Spec.RuntimeEnvYAML, "working_dir: gs://bucket/code/loop.zip") {
		t.Errorf("entrypoint %.80q / runtime env %q", *job.Spec.Entrypoint, *job.Spec.RuntimeEnvYAML)
	}
}

func TestRenderRefusals(t *testing.T) {
	t.Parallel()
	local := trainer("v6e", "4x4", 1)
	local.RuntimeEnv.WorkingDir = "./examples/jaxtrain/loop"
	_, err := kuberay.RenderJob(compile(t, local), kuberay.Options{})
	if !errors.Is(err, kuberay.ErrLocalWorkingDir) {
		t.Errorf("local working_dir: %v, want ErrLocalWorkingDir", err)
	}
	if got := fields(err); !slices.Equal(got, []string{"plan.job.runtimeEnv.workingDir"}) {
		t.Errorf("local working_dir fields %v", got)
	}
	service := compile(t, trainer("v6e", "4x4", 1))
	service.Kind = placement.KindApplication
	if _, err := kuberay.RenderJob(service, kuberay.Options{}); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("service plan: %v, want ErrUnsupported", err)
	}
	if _, err := kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{}, kuberay.RenderInput{Name: "Bad_Name"}); !slices.Equal(fields(err), []string{"metadata.name"}) {
		t.Errorf("bad name: %v", err)
	}

	// On an existing cluster: a RayCluster's name, no autoscaling of its
	// own, and the launcher packed (it must reach every node).
	_, err = kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{Cluster: "TPU_pool",
		Autoscaling: &kuberay.Autoscaling{MaxSlices: 2}})
	if got := fields(err); !slices.Equal(got, []string{"options.cluster", "options.autoscaling"}) {
		t.Errorf("on cluster TPU_pool with autoscaling: fields %v (%v), want options.cluster and options.autoscaling", got, err)
	}
	// The launcher on an existing cluster: Render packs it for the
	// submitter pod, as PackSubmittedWorkingDir does.
	noWD := trainer("v4", "2x2x2", 1)
	noWD.RuntimeEnv = runtimeenv.RuntimeEnv{}
	m, err := kuberay.Render(compile(t, noWD), kuberay.Options{Cluster: "tpu-pool"}, kuberay.RenderInput{})
	if err != nil || len(m.ConfigMaps) != 1 || m.Job.Spec.SubmitterPodTemplate == nil {
		t.Errorf("launcher on a cluster: %v, want its packed working_dir in the submitter pod", err)
	}
	// A backend without a packed working_dir cannot run the launcher on
	// an existing cluster, and a zip packed for the other kind of RayJob
	// is refused: its files would land one directory too deep, or lose a
	// top-level directory.
	_, err = kuberay.RenderWith(compile(t, noWD), kuberay.Options{Cluster: "tpu-pool"}, "", nil)
	if got := fields(err); !slices.Equal(got, []string{"plan.job.runtimeEnv.workingDir"}) {
		t.Errorf("launcher on a cluster without a packed working_dir: %v, want plan.job.runtimeEnv.workingDir", err)
	}
	mounted, err := kuberay.PackJobWorkingDir(compile(t, noWD))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kuberay.RenderWith(compile(t, noWD), kuberay.Options{Cluster: "tpu-pool"}, "", mounted)
	if got := fields(err); !slices.Equal(got, []string{"plan.job.runtimeEnv.workingDir"}) {
		t.Errorf("a mounted zip on an existing cluster: %v, want plan.job.runtimeEnv.workingDir", err)
	}
	submitted, err := kuberay.PackSubmittedWorkingDir(compile(t, noWD))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kuberay.RenderWith(compile(t, noWD), kuberay.Options{}, "", submitted)
	if got := fields(err); !slices.Equal(got, []string{"plan.job.runtimeEnv.workingDir"}) {
		t.Errorf("a submitted zip on the RayJob's own cluster: %v, want plan.job.runtimeEnv.workingDir", err)
	}
}

// renderGolden renders a golden RayJob with its packed working_dir, or
// none.
func renderGolden(p *placement.Plan, o kuberay.Options, in kuberay.RenderInput, wd *kuberay.WorkingDir) (*rayv1ac.RayJobApplyConfiguration, error) {
	obj, err := kuberay.RenderWith(p, o, in.Name, wd)
	if err != nil {
		return nil, err
	}
	return obj.(*rayv1ac.RayJobApplyConfiguration), nil
}

func fields(err error) []string {
	var out []string
	for _, e := range field.Errors(err) {
		out = append(out, e.Field)
	}
	return out
}
