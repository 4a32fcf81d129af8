// Package observe reads what real Ray reports about a running cluster's
// TPUs: the ray_tpu_* gauges every node's dashboard agent exports on its
// metrics export port, grouped by slice, host and chip.
//
// Ray's agent on a TPU host reads the GKE TPU device plugin's Prometheus
// endpoint (TPU_DEVICE_PLUGIN_ADDR, normally "<host ip>:2112") every
// REPORTER_UPDATE_INTERVAL_MS (default 5 s) and exports, per chip,
//
//	ray_tpu_tensorcore_utilization        percent
//	ray_tpu_memory_bandwidth_utilization  percent
//	ray_tpu_duty_cycle                    percent
//	ray_tpu_memory_used                   bytes
//	ray_tpu_memory_total                  bytes
//
// labelled TpuIndex (the host-local chip index), TpuDeviceName (the
// plugin's accelerator_id), TpuType (the plugin's model, e.g.
// tpu-v6e-slice) and TpuTopology, besides the node labels (ip, SessionName,
// ...). A Reader lists the nodes through the dashboard (package ray), GETs
// /metrics from every TPU node's MetricsAddr in parallel, parses the
// Prometheus text with github.com/prometheus/common/expfmt, and groups the
// chips by the node labels ray.io/tpu-slice-name and ray.io/tpu-worker-id.
// ParseExport and Group are the two halves without I/O. Where the node
// IPs the dashboard reports are out of reach (KubeRay seen from outside
// the Kubernetes cluster), WithNodeAddr and NodeAddrs point the Reader at
// other addresses, such as kubectl port-forwards of each pod's metrics
// port.
//
// Ray disables TPU collection on a node for the life of its agent after
// one failed fetch from the plugin, and reads nothing from a plugin that
// serves its node-scoped families under other names. A host whose agent
// never read the plugin comes back with no chips (and a host whose metrics
// port could not be read with Host.Err); a host whose agent stopped
// reading it keeps exporting the last values, which Host.Stale flags by
// comparing with the TPUs in the node's latest physical stats.
//
// Package observe imports the ray transport and the Prometheus libraries;
// it must not import a front end (train, serve, data), another backend
// (raybackend, sim, kuberay), placement, the backend contract, the
// launcher, the CLI or k8s.io (imports_test.go checks it).
package observe
