// Package kubetest runs a real Kubernetes control plane with the real
// KubeRay operator for tests: the kuberay backend's, and the raytpu
// command's tests of what it applies.
//
// Start launches etcd and kube-apiserver through controller-runtime's
// envtest, from the binaries scripts/setup-kube.sh builds into
// <repo>/.cache/kube/bin (or from $KUBEBUILDER_ASSETS when it is set; the
// apiserver runs with --endpoint-reconciler-type=none), installs the CRDs
// that ship in github.com/ray-project/kuberay/ray-operator (config/crd/bases
// of the module version in go.mod), and runs KubeRay's own RayCluster, RayJob
// and RayService reconcilers in-process under a controller-runtime manager,
// with the RayMultiHostIndexing feature gate on.
//
// What is not real by default: there is no kubelet, scheduler or
// kube-controller-manager.
// A small pod-status driver running beside the operator (podstatus.go) marks
// every pod Running and Ready with an IP as soon as it exists, which is what
// a kubelet would report once the containers started. Nothing runs inside
// the pods, so no Ray process answers the operator's dashboard calls, and
// batch Jobs (the RayJob submitter) never start.
//
// Start(ctx, WithPodRunner(podrunner.Options{})) replaces the driver with
// package podrunner: pods are bound to its nodes and run KubeRay's own
// commands (real `ray start` processes from the project virtualenv) in
// per-pod network namespaces with cluster DNS names, and their probes
// decide readiness; pods reach the API server at the runner's bridge
// address (KUBERNETES_SERVICE_HOST), which the API server's serving
// certificate names (Start writes its own CA and certificate). It needs
// root. WithControllerManager also runs the real kube-controller-manager
// (its Job controller, garbage collector, service account controller and
// root CA publisher, see Controllers) and turns on the ServiceAccount
// admission plugin, so that a RayJob's submitter Job gets its pod, owned
// objects are collected, and every pod gets its service account's token
// and the cluster's CA (Ray's autoscaler in a head pod uses them). SharedPods is one such control plane
// (both options) shared by a test binary's tests, as Shared is for the
// others.
//
// SharedKueue adds Kueue's real controllers (KueueVersion's cmd/kueue, a
// separate process built by scripts/setup-kube.sh with Kueue's own
// go.mod, and its CRDs) to SharedPods' control plane, with the RayJob and
// RayCluster integrations and no webhooks; Env.StartKueue does the same
// for a control plane of a test's own.
//
// Faults: Env.StopOperator / StartOperator restart the operator (a new
// manager, empty caches); Env.StopAPIServer / StartAPIServer restart
// kube-apiserver on the same address and certificates while etcd keeps the
// objects. A test that uses them starts a control plane of its own with
// Start. Env.WriteKubeconfig writes a kubeconfig for programs and kubectl
// (scripts/setup-kube.sh kubectl builds one into the same directory).
//
// A missing binary fails the test with a message saying to run
// scripts/setup-kube.sh (or make test); it never skips.
package kubetest
