// Package tpuplugin emulates the Prometheus endpoint of the GKE TPU device
// plugin, which Ray's dashboard agent reads when TPU_DEVICE_PLUGIN_ADDR is
// set (ray/dashboard/modules/reporter/reporter_agent.py:
// ReporterAgent._get_tpu_usage). A local test cluster runs one Server per
// node posing as a TPU host, so real Ray reads and re-exports the values a
// test sets, exactly as it does on GKE.
//
// # What is served
//
// GET /metrics answers the Prometheus text format, one gauge sample per
// chip and family, with the families and labels of the real plugin:
//
//	family                        scope    labels
//	tensorcore_utilization        node     accelerator_id, make, model, tpu_topology
//	memory_bandwidth_utilization  node     accelerator_id, make, model, tpu_topology
//	duty_cycle                    runtime  the node labels + container, namespace, pod
//	memory_used                   runtime  the node labels + container, namespace, pod
//	memory_total                  runtime  the node labels + container, namespace, pod
//	duty_cycle_node               runtime  accelerator_id, make, model, tpu_topology
//
// accelerator_id is "<slice number>-<index>". Node-scoped samples index the
// host's chips 0..N-1; runtime samples index them globally in the slice
// (worker w's chip i is w*N+i), the quirk Ray's parser undoes by mapping
// the sorted runtime indices onto the sorted host indices. make is
// "cloud-tpu" and model the GKE accelerator name (tpu-v6e-slice,
// tpu-v4-podslice, tpu7x, ...). The Go runtime and promhttp families a
// client_golang exporter adds are served too, as on a real node, so a
// reader has to skip samples without accelerator_id.
//
// Sources for the layout: Ray 2.60's parser (above) reads exactly the five
// names tensorcore_utilization, memory_bandwidth_utilization, duty_cycle,
// memory_used and memory_total and the labels accelerator_id, model and
// tpu_topology, and its comments describe the global runtime indices; an
// exposition captured from tpu-device-plugin v1.35.7-gke.0 on a
// tpu7x-standard-4t node (facebookincubator/dynolog, test of
// dynolog/src/tpumon/TpuScraper) shows the HELP texts, the runtime labels
// container, namespace and pod, make="cloud-tpu" and duty_cycle_node;
// apple/axlearn (axlearn/cloud/gcp/monitoring/tpu_client.py, MetricV2Name)
// lists the plugin's names memory_total, memory_used, duty_cycle_node,
// tensorcore_utilization and memory_bandwidth_utilization on port 2112.
//
// NodeSuffix serves the newer layout of that v1.35.7 capture instead, where
// the node-scoped families are named tensorcore_utilization_node and
// memory_bandwidth_utilization_node: Ray 2.60 does not read those names,
// so its TPU gauges stay empty against such a plugin.
//
// What a real plugin serves that this one does not: the libtpu runtime
// distributions and counters (collective, DCN, host/device transfer
// latencies, gRPC TCP statistics, megascale byte counters), chips not
// bound to a container (node samples without runtime samples), and values
// that move on their own.
//
// Package tpuplugin is internal: it may import the module's leaf packages
// (tpu, rayvocab) and the Prometheus client library, and nothing that runs
// workloads.
package tpuplugin
