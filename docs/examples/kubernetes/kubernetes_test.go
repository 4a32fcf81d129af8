// Package kubernetes_test holds the Go snippets of docs/kubernetes.md.
// The Examples render manifests and run without a cluster; the functions
// that need Kubernetes are compiled but not run.
package kubernetes_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// newTrainer is the guide's scenario: a JAX train loop on two v6e 4x4
// slices.
func newTrainer() train.JaxTrainer {
	// [snippet:trainer]
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: "v6e",
			Topology:    "4x4",
			NumSlices:   2,
		},
		RunConfig: train.RunConfig{Name: "llama", StoragePath: "gs://my-bucket/ray_results"},
	}
	// [end:trainer]
	return trainer
}

// excerpt prints the lines of a YAML stream that hold one of keys.
func excerpt(yaml []byte, keys ...string) {
	for _, line := range strings.Split(string(yaml), "\n") {
		for _, k := range keys {
			if strings.HasPrefix(strings.TrimSpace(line), k+":") || strings.HasPrefix(strings.TrimSpace(line), "- "+k+":") {
				fmt.Println(line)
				break
			}
		}
	}
}

// A compiled trainer rendered as the RayJob kubectl apply takes: a head
// without TPUs and one worker group of two slices of four hosts.
func Example_render() {
	// [snippet:render]
	plan, err := newTrainer().Compile()
	if err != nil {
		log.Fatal(err)
	}
	m, err := kuberay.Render(plan, kuberay.Options{Namespace: "ml"}, kuberay.RenderInput{})
	if err != nil {
		log.Fatal(err) // a field.ErrorList: every problem at once
	}
	yaml, err := m.YAML() // byte-identical from run to run
	if err != nil {
		log.Fatal(err)
	}
	// [end:render]
	excerpt(yaml, "kind", "groupName", "replicas", "numOfHosts",
		"cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology")

	// Output:
	// kind: ConfigMap
	// kind: RayJob
	//     - groupName: v6e-16
	//       numOfHosts: 4
	//       replicas: 2
	//             cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
	//             cloud.google.com/gke-tpu-topology: 4x4
}

// A RayService for a Serve application whose LLM replicas each own a v6e
// 2x4 slice, scaled by Ray's autoscaler from zero slices.
func Example_autoscaling() {
	// [snippet:autoscale]
	app := serve.Application{
		Name: "chat", ImportPath: "chat.app:build",
		Deployments: []serve.Deployment{{
			Name:              "LLM",
			NumReplicas:       serveconfig.ReplicaCount(2),
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "2x4"},
		}},
	}
	plan, err := app.Compile()
	if err != nil {
		log.Fatal(err)
	}
	m, err := kuberay.Render(plan, kuberay.Options{
		Autoscaling: &kuberay.Autoscaling{MinSlices: 0, IdleTimeout: 5 * time.Minute},
	}, kuberay.RenderInput{})
	if err != nil {
		log.Fatal(err)
	}
	spec := m.Service.Spec.RayClusterSpec
	fmt.Println("autoscaler:", *spec.EnableInTreeAutoscaling)
	for _, g := range spec.WorkerGroupSpecs {
		fmt.Printf("%s: %d slices now, %d to %d\n", *g.GroupName, *g.Replicas, *g.MinReplicas, *g.MaxReplicas)
	}
	// [end:autoscale]

	// Output:
	// autoscaler: true
	// v6e-8-0: 0 slices now, 0 to 1
	// v6e-8-1: 0 slices now, 0 to 1
}

// Options and the object are checked before anything is printed or sent:
// every problem at once, with its path below "options", "input" or the
// manifest's own fields.
func Example_validation() {
	plan, err := newTrainer().Compile()
	if err != nil {
		log.Fatal(err)
	}
	// [snippet:invalid]
	_, err = kuberay.Render(plan, kuberay.Options{
		Namespace:      "ML", // not a DNS label
		ActiveDeadline: -time.Hour,
		Autoscaling:    &kuberay.Autoscaling{UpscalingMode: "Fast"},
	}, kuberay.RenderInput{})
	for _, r := range field.Refs(err) {
		fmt.Println(r.Field, r.Type)
	}

	// Valid options, but fewer slices than the plan needs at once.
	_, err = kuberay.Render(plan, kuberay.Options{
		Autoscaling: &kuberay.Autoscaling{MaxSlices: 1},
	}, kuberay.RenderInput{})
	fmt.Println(err)

	// A name KubeRay would refuse.
	_, err = kuberay.Render(plan, kuberay.Options{}, kuberay.RenderInput{Name: "llama_run"})
	fmt.Println(field.Refs(err))
	// [end:invalid]

	// Output:
	// options.namespace Invalid
	// options.activeDeadline Invalid
	// options.autoscaling.upscalingMode NotSupported
	// options.autoscaling.maxSlices: Invalid value: 1: worker group v6e-16 (plan.slices[0], v6e-16 4x4) needs 2 slices at once: at least 2
	// [{metadata.name Invalid}]
}

// The trainer on Spot capacity: GKE's Spot selector and toleration on the
// TPU workers, nothing on the head; a Spot VM never consumes a specific
// reservation, so asking for both is refused at the field.
func Example_capacity() {
	plan, err := newTrainer().Compile()
	if err != nil {
		log.Fatal(err)
	}
	// [snippet:capacity]
	m, err := kuberay.Render(plan, kuberay.Options{
		Capacity: placement.Capacity{Class: placement.CapacitySpot},
	}, kuberay.RenderInput{})
	if err != nil {
		log.Fatal(err)
	}
	pod := m.Job.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec
	fmt.Println(pod.NodeSelector["cloud.google.com/gke-spot"], *pod.Tolerations[0].Key)

	_, err = kuberay.Render(plan, kuberay.Options{
		Capacity: placement.Capacity{Class: placement.CapacitySpot, Reservation: "tpu-res"},
	}, kuberay.RenderInput{})
	fmt.Println(field.Refs(err))
	// [end:capacity]

	// Output:
	// true cloud.google.com/gke-spot
	// [{options.capacity.class NotSupported}]
}

// Whether the trainer's two v6e 4x4 slices (32 chips) fit a Kueue
// queue's quota, before anything is submitted.
func Example_quota() {
	plan, err := newTrainer().Compile()
	if err != nil {
		log.Fatal(err)
	}
	// [snippet:quota]
	for _, q := range []sim.Quota{{TPU: 16}, {TPU: 32}} {
		fit, err := sim.FitQuota(plan, q)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(fit)
	}
	// [end:quota]

	// Output:
	// does not fit quota: needs 32 google.com/tpu, quota 16
	// fits quota: needs 32 google.com/tpu of 32
}

// Running on Kubernetes needs a cluster with KubeRay: compiled, not run.
func runOnKube(ctx context.Context) error {
	// [snippet:kuberay-backend]
	cfg, ns, err := kuberay.LoadConfig("", "") // $KUBECONFIG or ~/.kube/config, its current context
	if err != nil {
		return err
	}
	b, err := kuberay.New(cfg, kuberay.WithOptions(kuberay.Options{
		Namespace:      ns,
		ActiveDeadline: 2 * time.Hour,
	}))
	if err != nil {
		return err
	}
	// A RayJob: the same call as on the simulator, another backend.
	res, err := newTrainer().Fit(ctx, b, nil)
	if err != nil {
		return err
	}
	fmt.Println(res.Backend, res.Checkpoint)
	// [end:kuberay-backend]
	return nil
}

var _ = runOnKube

// Pods share no disk: a run of several hosts whose storage is a local
// directory is refused before anything is created, unless the directory
// is declared mounted on every pod.
func Example_storage() {
	// [snippet:storage]
	trainer := newTrainer()
	trainer.RunConfig.StoragePath = "/mnt/results" // a directory of each pod
	plan, err := trainer.Compile()
	if err != nil {
		log.Fatal(err)
	}
	_, err = kuberay.Render(plan, kuberay.Options{}, kuberay.RenderInput{})
	for _, r := range field.Refs(err) {
		fmt.Println(r.Field, r.Type)
	}

	// The same directory, a Filestore share mounted on every pod.
	trainer.RunConfig.StorageSharedMount = true
	plan, err = trainer.Compile()
	if err != nil {
		log.Fatal(err)
	}
	_, err = kuberay.Render(plan, kuberay.Options{}, kuberay.RenderInput{})
	fmt.Println(err, plan.Job.Storage.SharedMount)
	// [end:storage]

	// Output:
	// trainer.run_config.storage_path Invalid
	// <nil> true
}

// Uploading a working_dir needs Google credentials: compiled, not run.
func uploadWorkingDir(ctx context.Context, trainer train.JaxTrainer) error {
	cfg, ns, err := kuberay.LoadConfig("", "")
	if err != nil {
		return err
	}
	// [snippet:package-bucket]
	trainer.RuntimeEnv.WorkingDir = "./llama" // 40 MiB: too large for a ConfigMap
	b, err := kuberay.New(cfg, kuberay.WithOptions(kuberay.Options{
		Namespace:     ns,
		PackageBucket: "gs://my-bucket/raytpu-packages",
	}))
	if err != nil {
		return err
	}
	// Uploads gs://my-bucket/raytpu-packages/_ray_pkg_<hash>.zip once,
	// then applies the RayJob whose runtime_env names it.
	res, err := trainer.Fit(ctx, b, nil)
	// [end:package-bucket]
	if err != nil {
		return err
	}
	fmt.Println(res.Checkpoint)
	return nil
}

var _ = uploadWorkingDir
