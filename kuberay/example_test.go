package kuberay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// A Serve application becomes a RayService whose serveConfigV2 holds the
// compiled application, and one worker group per replica slice; the
// replica runtime its TPU replicas import travels in a ConfigMap applied
// first.
func ExampleRender_service() {
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
	m, err := kuberay.Render(plan, kuberay.Options{Namespace: "ml"}, kuberay.RenderInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	svc := m.Service
	fmt.Println(*svc.Name, *svc.Namespace)
	for _, cm := range m.ConfigMaps {
		fmt.Println("ConfigMap", *cm.Name)
	}
	fmt.Println(strings.HasPrefix(*svc.Spec.ServeConfigV2, `applications:
- {"name":"chat"`))
	for _, g := range svc.Spec.RayClusterSpec.WorkerGroupSpecs {
		fmt.Println(*g.GroupName, "replicas", *g.Replicas, "hosts", *g.NumOfHosts, g.Template.Spec.NodeSelector)
	}
	// Output:
	// chat ml
	// ConfigMap chat-replica-runtime
	// true
	// v6e-8-0 replicas 1 hosts 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
	// v6e-8-1 replicas 1 hosts 1 map[cloud.google.com/gke-tpu-accelerator:tpu-v6e-slice cloud.google.com/gke-tpu-topology:2x4]
}

// Two v6e 4x4 slices reserved as a plain RayCluster: one worker group of
// two replicas (slices) of four hosts, MEGASCALE_NUM_SLICES set.
func ExampleRender_cluster() {
	g, err := placement.SliceSpec{Accelerator: "v6e", Topology: "4x4", NumSlices: 2}.Compile(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := kuberay.Render(placement.NewSlicePlan("reserve", g), kuberay.Options{}, kuberay.RenderInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rc := m.Cluster
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

// CheckOptions reports every field of Options a Backend or Render cannot
// use, with its path below "options" and its value; WithOptions returns
// the same errors from New, and Render refuses the same options.
func ExampleCheckOptions() {
	err := kuberay.CheckOptions(kuberay.Options{ActiveDeadline: -time.Minute, Autoscaling: &kuberay.Autoscaling{MinSlices: -1}})
	fmt.Println(err)
	fmt.Println(kuberay.CheckOptions(kuberay.Options{Namespace: "ml", ActiveDeadline: time.Hour}))
	// Output:
	// 2 invalid fields:
	//   options.activeDeadline: Invalid value: "-1m0s": must be positive, or 0 for no deadline
	//   options.autoscaling.minSlices: Invalid value: -1: slices from 0 to 2147483647
	// <nil>
}
