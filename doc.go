// Package raytpu is a Go SDK for running Ray workloads on TPUs.
//
// A Go program declares a workload with typed specs (a Ray Train JaxTrainer,
// a Ray Serve deployment, a Ray Data pipeline); raytpu validates the TPU
// slice shape against a generation catalog, compiles the workload into slice
// placement groups exactly as Ray builds them, and runs it on a backend: a
// real Ray cluster through its dashboard, Kubernetes through KubeRay, or the
// in-process simulated TPU cluster that is the embedded default.
//
// # Organization
//
// Imports point one way, toward the catalog:
//
//	field      validation errors with field paths, types and suggestions
//	tpu        the TPU generation catalog, topology parsing, slice shapes
//	placement  slice placement groups as Ray builds them; the compiled Plan
//	train      Ray Train's JaxTrainer, compiled to a Plan
//	sim        the simulated TPU cluster (embedded default backend)
//	ray        the Ray dashboard client: Jobs API, packages, log tail
//	cmd/raytpu the command-line tool over the same packages
//	internal   the embedded Python launcher, the local Ray test cluster
//
// Front ends (train, and later serve and data) never import each other or a
// backend; placement imports no backend; only a Kubernetes backend may import
// k8s.io packages. A test in this package enforces these rules.
package raytpu
