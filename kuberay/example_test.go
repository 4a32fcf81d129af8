package kuberay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// A Serve application becomes a RayService whose serveConfigV2 holds the
// compiled application byte for byte, and one worker group per replica
// slice.
func ExampleRenderService() {
	plan, err := serve.Application{
		Name: "chat", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{
			Name: "LLM", NumReplicas: serveconfig.ReplicaCount(2),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "2x4"},
		}},
	}.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	svc, err := kuberay.RenderService(plan, kuberay.Options{Namespace: "ml"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*svc.Name, *svc.Namespace)
	// The compiled config, as Ray is sent it, with the replica runtime in
	// py_modules: its zip in ConfigMap chat-replica-runtime, which Deploy
	// writes and every Ray container mounts.
	rt, err := kuberay.PackReplicaRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	app := plan.Serve.Config
	rayruntime.ShipModule(&app, rt.URI())
	cfg, err := app.MarshalJSON()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*svc.Spec.ServeConfigV2 == "applications:\n- "+string(cfg)+"\n", kuberay.ReplicaRuntimeConfigMapName(*svc.Name))
	for _, g := range svc.Spec.RayClusterSpec.WorkerGroupSpecs {
		fmt.Println(*g.GroupName, "replicas", *g.Replicas, "hosts", *g.NumOfHosts, g.Template.Spec.NodeSelector)
	}
	// Output:
	// chat ml
	// true chat-replica-runtime
	// v6e-8-0 replicas 1 hosts 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
	// v6e-8-1 replicas 1 hosts 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
}

// Two v6e 4x4 slices reserved as a plain RayCluster: one worker group of
// two replicas (slices) of four hosts, MEGASCALE_NUM_SLICES set.
func ExampleRenderCluster() {
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	rc, err := kuberay.RenderCluster(placement.NewSlicePlan("reserve", g), kuberay.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := rc.Spec.WorkerGroupSpecs[0]
	c := w.Template.Spec.Containers[0]
	fmt.Println(*rc.Name, *w.GroupName, *w.Replicas, *w.NumOfHosts, *c.Env[0].Name, *c.Env[0].Value)
	// Output:
	// reserve v6e-16 2 4 MEGASCALE_NUM_SLICES 2
}

// A local working_dir is zipped for a ConfigMap that every Ray container
// mounts; Ray runs the job in it through a file:// URI.
func ExamplePackWorkingDir() {
	dir, err := os.MkdirTemp("", "code-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "train_loop.py"), []byte("def train_func(config):\n    pass\n"), 0o644)
	os.Chmod(filepath.Join(dir, "train_loop.py"), 0o644) // the zip keeps file modes: fix it whatever the umask
	wd, err := kuberay.PackWorkingDir(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(wd.Zip) <= kuberay.WorkingDirMaxSize, wd.URI())
	// Output:
	// true file:///raytpu/working_dir/wd-9f948694542a9b52.zip
}

// CheckOptions reports every field of Options a Backend cannot use, with
// its path and value; WithOptions returns the same errors from New.
func ExampleCheckOptions() {
	err := kuberay.CheckOptions(kuberay.Options{Name: "llama", ActiveDeadline: -time.Minute})
	fmt.Println(err)
	fmt.Println(kuberay.CheckOptions(kuberay.Options{Namespace: "ml", ActiveDeadline: time.Hour}))
	// Output:
	// 2 invalid fields:
	//   Options.Name: Forbidden: "llama": each run names its own RayJob (RunOptions.SubmissionID) and each application its RayService (the plan's name); leave it empty
	//   Options.ActiveDeadline: Invalid value: "-1m0s": must be positive, or 0 for no deadline
	// <nil>
}
