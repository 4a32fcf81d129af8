// Package podrunner runs the pods of a test control plane for real: it
// does what a kubelet, a CNI plugin, cluster DNS and the scheduler's
// binding step do for the nodes it owns, and no more, so that the real
// KubeRay operator's pods run real `ray start` processes.
//
// Nodes: the runner creates its Node objects (Options.Nodes, Ready, with
// the bridge's address) and binds each pod that names no node to the
// first node whose labels hold the pod's nodeSelector (there is no
// scheduler; affinity, taints and resources are not weighed).
//
// Containers: each container's command and args run exactly as written in
// the pod (after the kubelet's $(VAR) expansion), with the project
// virtualenv standing in for the image: its bin first on PATH and
// VIRTUAL_ENV set. The environment is resolved as the kubelet does (value,
// fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, envFrom;
// of the service-link variables only the kubernetes Service's, which a
// kubelet always sets). Volumes (emptyDir, configMap, secret, downwardAPI,
// projected with configMap, secret, downwardAPI and serviceAccountToken
// sources, a TokenRequest token bound to the pod; hostPath) are
// directories under the pod's root, bound at their mountPath (symlinks of
// the host's root such as /var/run followed) in the container's own root: see
// rootfs.go for how the host's root is reassembled in a private mount
// namespace, so that absolute paths like /raytpu/working_dir exist for the
// container and /tmp is its own. Each container has its own PID
// namespace: deleting the pod (SIGTERM, SIGKILL after the grace period,
// capped by Options.MaxGrace) ends every process it started. restartPolicy
// is honoured with the kubelet's back-off; init containers run in order
// first.
//
// TPU: a container that asks for google.com/tpu in a pod whose
// nodeSelector names a GKE TPU node pool (cloud.google.com/gke-tpu-accelerator
// and -topology; TPUNode makes such a node) runs as on a GKE TPU VM: it
// gets the environment GKE's TPU webhook injects (TPU_WORKER_ID, TPU_NAME,
// TPU_WORKER_HOSTNAMES, and MEGASCALE_* when its env sets
// MEGASCALE_NUM_SLICES), the TPU VM's TPU_ACCELERATOR_TYPE and
// TPU_TOPOLOGY, and JAX on the CPU with one device per chip, posed as the
// local Ray test cluster poses its TPU hosts (see tpu.go). The pod's spec
// in the API is not patched, and the webhook's hostname and subdomain (the
// names in TPU_WORKER_HOSTNAMES) are not served by the runner's DNS.
//
// Network: each pod has a network namespace ("kpr-<pid>-<n>") with eth0,
// one end of a veth pair whose other end is on the runner's bridge
// ("kprbr<pid>", 10.244.x.1/24 in the root namespace, also every node's
// IP). Cluster DNS is a hosts file per pod (/etc/netns/<netns>/hosts,
// which `ip netns exec` binds over /etc/hosts): the pod's own name, and
// for each Service <svc>.<ns>.svc.cluster.local, <svc>.<ns>.svc,
// <svc>.<ns> (and <svc> from its own namespace) on the IPs of the ready
// pods its selector picks (or all of them when it publishes not-ready
// addresses), rewritten as pods and Services change. There is no
// kube-proxy: a Service name reaches its pods' ports directly. Processes
// of the root namespace (the in-process operator) resolve the same names
// through Runner.DialContext.
//
// The API server: it listens on the root namespace's loopback, so the
// runner forwards the bridge's address, port 443 (APIServerPort), to it
// over TCP, as kube-proxy forwards the kubernetes Service's ClusterIP;
// KUBERNETES_SERVICE_HOST (and the Service's other variables) and
// kubernetes.default.svc name that address. TLS is end to end: the API
// server's serving certificate must name the bridge's address, which is
// why a control plane makes the Network (NewNetwork) before its API
// server and hands it over in Options.Network (kubetest does). A pod's
// service account token and CA come from the ServiceAccount admission
// plugin's projected volume (kubetest.WithControllerManager turns it on).
//
// Status: the runner reports phase (Pending, Running, Succeeded, Failed
// from the real exit codes), podIP, hostIP, container states with exit
// codes and restart counts, and readiness from the pod's own readiness
// probes; liveness probes restart containers. exec probes run inside the
// container's namespaces (nsenter), httpGet and tcpSocket probes from the
// node to the pod's IP.
//
// Logs: each container's stdout and stderr go to a file kept until the
// pod is deleted; the apiserver reads them (pods/log, kubectl logs) from
// the runner's kubelet port on the node's InternalIP (logserver.go).
//
// Clean-up: Runner.Stop removes everything; Start first removes what
// runners whose process is gone left (CleanupStale). The runner needs
// root, iproute2 and util-linux.
//
// podrunner is test infrastructure: only tests import it (through
// kubetest).
package podrunner
