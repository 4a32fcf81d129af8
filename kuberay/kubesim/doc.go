// Package kubesim predicts what Ray's autoscaler does for a plan on a
// RayCluster that already runs on Kubernetes: it turns the KubeRay
// backend's reading of the cluster (kuberay.ClusterSlices, from
// Backend.ReadClusterSlices or kuberay.SlicesOf) into a simulator spec and
// asks sim.PredictAutoscaling, in the simulator's words. It is the check
// `raytpu apply --ray-cluster` runs before it creates a RayJob on an
// existing cluster, for Go programs that call kuberay's Backend.Apply or
// Run with Options.Cluster: a plan the cluster cannot give its slices
// (no group of the slice's shape, a max too small, autoscaler v2 and a
// multi-host slice) would otherwise wait with its slice reservation
// pending. kuberay.WithClusterCheck(kubesim.Check) makes the backend ask
// it before it creates each such RayJob:
//
//	b, err := kuberay.New(cfg,
//		kuberay.WithOptions(kuberay.Options{Namespace: "ml", Cluster: "tpu"}),
//		kuberay.WithClusterCheck(kubesim.Check))
//	...
//	out, err := b.Run(ctx, plan, backend.RunOptions{}) // refused, in the simulator's words, when the cluster cannot serve plan
//
// kubesim bridges the kuberay backend and the simulator, which import no
// other backend; it imports both, and neither imports it.
package kubesim
