// Package raytpu is a Go SDK for running Ray workloads on TPUs.
//
// A Go program declares a workload with typed specs (a Ray Train JaxTrainer,
// a Ray Serve deployment, a Ray Data pipeline); raytpu validates the TPU
// slice shape against a generation catalog, compiles the workload into slice
// placement groups exactly as Ray builds them, and runs it on a backend: a
// real Ray cluster through its dashboard, Kubernetes through KubeRay, or the
// in-process simulated TPU cluster that is the embedded default.
//
// # A tour: front ends, the plan, backends
//
// Front ends mirror Ray's libraries. train.JaxTrainer is
// ray.train.v2.jax.JaxTrainer: a train loop named by import path, a
// ScalingConfig with UseTPU, an accelerator and a topology, a RunConfig.
// Compile checks every rule Ray and the TPU catalog enforce and reports
// every problem at once, each with its field path
// (trainer.scaling_config.topology: did you mean "4x4"?).
//
// What a front end compiles to is a placement.Plan: plain data, the same
// bytes from run to run. It holds the slice placement groups Ray will make
// (each tagged with the part of the workload it holds: a trainer's worker
// group, a deployment's replica) and what runs on them (a Ray job with its
// runtime_env, or a Serve application).
//
// A backend runs a plan. The contract is package backend: front ends call
// it with Ray's verbs (trainer.Fit(ctx, b, nil) is trainer.fit(), app.Run(ctx,
// s) is serve.run(app)), and the backends implement it:
//
//	sim.Cluster        places the plan on a simulated TPU cluster as Ray
//	                   would and diagnoses it (a group spread over two
//	                   slices, a head that cannot be reserved); runs nothing
//	raybackend.Backend runs it on a Ray cluster through its dashboard
//	kuberay.Backend    runs it on Kubernetes as a KubeRay RayJob
//
// Changing the backend value is the only change a program needs to go from
// one to another; see the example of this package.
//
// The contract is open, as database/sql's driver contract is: a platform
// team's own backend (one that runs plans on an existing Ray cluster
// through its own job queue, or records and replays them) implements the
// same interfaces, checks every plan with backend.CheckPlan before doing
// anything, returns errors that match the neutral sentinels
// (backend.ErrNotFound, ErrAlreadyExists, ErrInvalidPlan, ErrUnsupported)
// and proves it with the conformance suite backend/backendtest, which
// sim, raybackend and kuberay pass too. examples/custombackend is such a
// backend: a journal that records every run and replays it on another
// cluster, run on the embedded default (go run ./examples/custombackend).
//
// # Field paths
//
// Every error for bad input is a field.Error at a path, and every path
// follows one rule: a segment is the spelling of the file the user
// writes, which is the field's json tag. Where a Go type mirrors a Ray
// type, that tag is Ray's own snake_case keyword
// (trainer.scaling_config.num_workers, trainer.run_config.name,
// num_replicas, ray_actor_options); raytpu's own types (the compiled plan,
// kuberay's options) use lowerCamel json tags as Kubernetes does
// (plan.slices[0].numSlices). A collection Ray keys by name (a dict:
// datasets, deployments, applications) is keyed by name
// (app.deployments[LLM]), a list by index (plan.slices[0].groups[0]
// .bundles[3]). A path starts at the object's name: trainer, app,
// pipeline, plan, options.
//
// # Organization
//
// Imports point one way, toward the catalog:
//
//	field       validation errors with field paths, types and suggestions
//	rayvocab    Ray's names: resources, ray.io labels, TPU_* and MEGASCALE_* env
//	runtimeenv  Ray's runtime_env, the one type every package uses
//	serveconfig Ray Serve's application config, typed: compiled by serve,
//	            carried by the Plan, read and sent by the backends
//	tpu         the TPU generation catalog, topology parsing, slice shapes
//	placement   slice placement groups as Ray builds them; the compiled Plan
//	rayruntime  what runs inside Ray (the Python launcher and replica
//	            runtime) and its wire protocol, shipped by every backend
//	backend     the contract between front ends and backends
//	backend/backendtest  the contract's conformance suite
//	train       Ray Train's JaxTrainer, compiled to a Plan, fitted on a backend
//	serve       Ray Serve applications, compiled to a Plan, run on a backend
//	serve/llm   Ray Serve LLM: LLMConfig and build_openai_app's application,
//	            compiled through serve's rules to a Plan
//	data        Ray Data pipelines and iter_jax_batches, with a batch prediction
//	sim         the simulated TPU cluster (embedded default backend)
//	profiler    JAX profiler capture over gRPC into TensorBoard/XProf log dirs
//	ray         the Ray dashboard client: Jobs API, packages, log tail
//	raybackend  the Ray cluster backend, on top of the ray client
//	kuberay     the KubeRay backend (the only importer of k8s.io packages)
//	cmd/raytpu  the command-line tool over the same packages; its own code
//	            (cli, progress) in cmd/raytpu/internal
//	internal    the local Ray cluster posing as TPU hosts; testinfra, what
//	            only tests import (clusters, the kube control plane, goldens)
//
// Front ends never import each other or a backend (serve/llm builds on
// serve, as Ray Serve LLM does on Serve; the backend contract is theirs
// to use); backends import no front end; the ray client is a
// transport that knows nothing of plans or the runtime; only a Kubernetes
// backend (and the kube control plane of the tests) may import k8s.io and
// sigs.k8s.io packages. A test in this package enforces these rules.
// # The public API and its promise
//
// Every package above outside internal/ is public API, and each is there
// because a user needs it: the front ends, the plan and the catalog for
// workload definitions; backend, backend/backendtest, rayruntime and
// rayvocab for a platform team's own backend (the runtime is what every
// backend ships into Ray, and rayvocab names the resources, labels and
// environment a backend must set or read exactly as Ray spells them); ray,
// observe and profiler for programs that talk to a live cluster;
// serve/client and serve/servev1 (generated gRPC code) for programs that
// call a served model; kuberay/kubesim for checking a plan against a live
// RayCluster's groups; runtimeenv/packaging for uploading a working_dir as
// Ray names it. What only raytpu's own packages share (the batch model
// behind data.Predict, serve's rule checks, nil detection) lives under an
// internal/ folder, and so does everything the tests and the command use.
//
// The exported surface is recorded, one feature a line as Go's own
// api/*.txt, in api/raytpu.txt; the suite fails when the code and the
// record disagree, so a change to the surface shows in the diff that
// makes it. Every exported function and method is total: called with nil,
// typed-nil, zero or negative values it returns an error (or a documented
// zero answer), never panics; the suite calls each one so (TestTotal).
//
// raytpu is at v0: the API may still change between releases, each change
// visible in api/raytpu.txt and named in the release notes, with the old
// name kept for one release as a // Deprecated: wrapper where that is
// possible. From v1 on raytpu keeps Go 1-style compatibility within the
// major version: no exported name is removed or changes its signature or
// documented meaning; new fields, methods, functions and constants may be
// added, so write struct literals with field names; interfaces that users
// implement (backend.Runner, backend.Server) gain no methods.
package raytpu
