// Package train_test holds the Go snippets of docs/train.md. The Examples
// run on the simulated TPU cluster; the functions that need a Ray cluster
// or Kubernetes are compiled but not run.
package train_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

// newTrainer is the guide's scenario: a JAX train loop on two v6e 4x4
// slices, keeping two checkpoints and restarting up to three times.
func newTrainer() train.JaxTrainer {
	// [snippet:trainer]
	trainer := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    map[string]any{"lr": 1e-3, "steps": 1000},
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: "v6e",
			Topology:    "4x4",
			NumSlices:   2, // multi-slice: 2 × 4 hosts = 8 workers
		},
		RunConfig: train.RunConfig{
			Name:        "llama",
			StoragePath: "gs://my-bucket/ray_results",
			Checkpoint:  train.CheckpointConfig{NumToKeep: 2},
			Failure:     train.FailureConfig{MaxFailures: 3},
		},
	}
	// [end:trainer]
	return trainer
}

// Fit on the simulator places one worker per TPU host and runs nothing.
func Example_fitOnSimulator() {
	trainer := newTrainer()
	// [snippet:fit-sim]
	spec, err := sim.ParseSpec("2*v6e-16,cpu:1") // two v6e 4x4 slices and a CPU head
	if err != nil {
		log.Fatal(err)
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		log.Fatal(err)
	}
	res, err := trainer.Fit(context.Background(), cluster, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("simulated:", res.Simulated, "backend:", res.Backend)
	for _, w := range res.Workers {
		fmt.Println("worker", w.Bundle, "on", w.Node, "slice", w.SliceName)
	}
	// [end:fit-sim]

	// Output:
	// simulated: true backend: sim
	// worker 0 on v6e-16-0-w0 slice v6e-16-0
	// worker 1 on v6e-16-0-w1 slice v6e-16-0
	// worker 2 on v6e-16-0-w2 slice v6e-16-0
	// worker 3 on v6e-16-0-w3 slice v6e-16-0
	// worker 4 on v6e-16-1-w0 slice v6e-16-1
	// worker 5 on v6e-16-1-w1 slice v6e-16-1
	// worker 6 on v6e-16-1-w2 slice v6e-16-1
	// worker 7 on v6e-16-1-w3 slice v6e-16-1
}

// A typo never reaches a cluster: every problem comes back at once, each
// at the path of the field in Ray's spelling, with the nearest valid value.
func Example_validation() {
	// [snippet:invalid]
	_, err := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: "v6e",
			Topology:    "4x5", // no such v6e slice
			NumSlices:   2,
		},
		RunConfig: train.RunConfig{
			Failure: train.FailureConfig{MaxFailures: -1}, // Ray's -1 is RetryForever here
		},
	}.Compile()
	fmt.Println(err)
	for _, e := range field.Errors(err) {
		fmt.Printf("%s %s %q\n", e.Field, e.Type, e.Suggestion)
	}
	// [end:invalid]

	// Output:
	// 3 invalid fields:
	//   trainer.scaling_config.topology: Unsupported value: "4x5": not in Ray's valid v6e topologies: did you mean "4x4"? (supported: "1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16")
	//   trainer.run_config.name: Required value: a run name; runs that share a name and storage path resume one another
	//   trainer.run_config.failure_config.max_failures: Invalid value: -1: must be 0 or a positive count; to retry forever set retry_forever (RetryForever)
	// trainer.scaling_config.topology NotSupported "4x4"
	// trainer.run_config.name Required ""
	// trainer.run_config.failure_config.max_failures Invalid ""
}

// A trainer that does not fit the cluster fails on the simulator before
// any cluster is involved, with what a real cluster would do.
func Example_placementError() {
	trainer := newTrainer()
	// [snippet:no-fit]
	spec, _ := sim.ParseSpec("1*v6e-16,cpu:1") // one slice, the trainer wants two
	cluster, _ := sim.NewCluster(spec)
	res, err := trainer.Fit(context.Background(), cluster, nil)
	var pe *backend.PlacementError
	if errors.As(err, &pe) {
		fmt.Println(errors.Is(err, backend.ErrPlacement), res.Simulated)
		fmt.Println(err)
	}
	// [end:no-fit]

	// Output:
	// true true
	// sim: plan "llama" cannot be placed as it needs: error HeadReservationFailed: worker group "llama": slice 1: TimeoutError: Failed to reserve TPU head for slice with shape: v6e-16 after 60.0 seconds. Ensure your cluster has sufficient resources. Requesting TPU head node with labels: {'ray.io/tpu-worker-id': '0', 'ray.io/tpu-pod-type': 'v6e-16'}. Simulator: bundle 0 {TPU-v6e-16-head: 1} with label selector {ray.io/tpu-pod-type: v6e-16, ray.io/tpu-worker-id: 0}: the one node that can hold it does not have it free; held by placement group pg-1 (head reservation of slice 0 of worker group "llama"); every placement group of the request was removed
}

// sim.Cluster.LoseHost models what Ray Train 2.60 does when a TPU host
// dies: the group restarts on an intact slice from the latest checkpoint.
func Example_hostLoss() {
	trainer := newTrainer()
	// [snippet:lose-host]
	spec, _ := sim.ParseSpec("3*v6e-16,cpu:1") // a spare slice
	cluster, _ := sim.NewCluster(spec)
	plan, err := trainer.Compile()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	before, err := cluster.Place(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	loss, err := cluster.LoseHost(ctx, plan, before, "v6e-16-0-w2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recovered:", loss.Recovered, "intact:", loss.IntactSlices)
	var slices []string
	for _, l := range loss.After.Landings(plan) {
		if len(slices) == 0 || slices[len(slices)-1] != l.SliceName {
			slices = append(slices, l.SliceName)
		}
	}
	fmt.Println("restarted on:", slices)
	// [end:lose-host]

	// Output:
	// recovered: true intact: map[v6e-16:2]
	// restarted on: [v6e-16-1 v6e-16-2]
}

// sim.Cluster.LoseSlice models a whole slice preempted (GKE reclaiming a
// spot node pool): with no spare slice the group waits until the slice is
// back, then lands on both slices again.
func Example_sliceLoss() {
	trainer := newTrainer()
	// [snippet:lose-slice]
	spec, _ := sim.ParseSpec("2*v6e-16,cpu:1") // no spare slice
	cluster, _ := sim.NewCluster(spec)
	plan, err := trainer.Compile()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	before, err := cluster.Place(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	loss, err := cluster.LoseSlice(ctx, plan, before, "v6e-16-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lost:", loss.Hosts)
	fmt.Println("recovered without it:", loss.Recovered, "intact:", loss.IntactSlices)
	// The node pool is recreated: the slice is back under its name.
	if err := cluster.ReviveSlice("v6e-16-1"); err != nil {
		log.Fatal(err)
	}
	again, err := cluster.Place(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("placed again:", !again.Diagnosis.HasErrors())
	// [end:lose-slice]

	// Output:
	// lost: [v6e-16-1-w0 v6e-16-1-w1 v6e-16-1-w2 v6e-16-1-w3]
	// recovered without it: false intact: map[v6e-16:1]
	// placed again: true
}

// fitOnRay is compiled, not run: it needs a Ray cluster.
func fitOnRay(ctx context.Context, trainer train.JaxTrainer) error {
	// [snippet:fit-ray]
	client, err := ray.NewClient("http://127.0.0.1:8265") // the dashboard
	if err != nil {
		return err
	}
	b, err := raybackend.New(client)
	if err != nil {
		return err
	}
	res, err := trainer.Fit(ctx, b, nil)
	var hl *train.HostLossError
	switch {
	case errors.As(err, &hl):
		// Lost hosts, and too few intact slices left to restart.
		return fmt.Errorf("need %d intact %s slices, %d left: %w", hl.NeedSlices, hl.PodType, hl.IntactSlices, err)
	case err != nil:
		return err // invalid trainer, TrainingFailedError, or a job that died
	}
	fmt.Println("checkpoint:", res.Checkpoint, "metrics:", res.Metrics)
	fmt.Println("attempts:", len(res.Attempts))
	if rec := res.Recovery(); rec != nil {
		fmt.Println("recovered:", rec) // lost hosts, slices before and after, checkpoint
	}
	// [end:fit-ray]
	return nil
}

// fitOnKubeRay is compiled, not run: it needs a Kubernetes cluster with
// the KubeRay operator.
func fitOnKubeRay(ctx context.Context, trainer train.JaxTrainer) error {
	// [snippet:fit-kuberay]
	cfg, ns, err := kuberay.LoadConfig("", "") // $KUBECONFIG or ~/.kube/config
	if err != nil {
		return err
	}
	b, err := kuberay.New(cfg, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		return err
	}
	_, err = trainer.Fit(ctx, b, nil) // a RayJob; each slice a worker group replica
	// [end:fit-kuberay]
	return err
}

var _, _ = fitOnRay, fitOnKubeRay

// A local StoragePath declared mounted on every host: the plan says so,
// and the KubeRay backend takes it for a run of several hosts.
func Example_sharedMount() {
	trainer := newTrainer()
	// [snippet:shared-mount]
	trainer.RunConfig.StoragePath = "/mnt/filestore/ray_results"
	trainer.RunConfig.StorageSharedMount = true // NFS, Filestore or Cloud Storage FUSE on every host
	plan, err := trainer.Compile()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", *plan.Job.Storage)
	// [end:shared-mount]

	// Output:
	// {Path:/mnt/filestore/ray_results Field:trainer.run_config.storage_path SharedMount:true}
}
