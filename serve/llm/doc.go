// Package llm mirrors Ray Serve LLM (ray.serve.llm, Ray 2.60) for TPUs:
// an [LLMConfig] per model and an [OpenAIApp], build_openai_app's
// application with its LLMServingArgs, which serves every model behind one
// OpenAI-compatible API (/v1/chat/completions, /v1/completions,
// /v1/models).
//
// JSON tags are Ray's names; a Go field's zero value is Ray's default.
// [OpenAIApp.Compile] checks every rule Ray's LLMConfig, LLMServingArgs
// and the builder enforce that can be known without the engine, the TPU
// catalog's, and Serve's own rules for the deployment options (package
// serve's, reused), reports every problem at once under
// app.llm_configs[i]...., and yields a [placement.Plan] of kind Application
// whose Serve.Config is exactly the entry of a `serve deploy` config file:
// import_path ray.serve.llm:build_openai_app and the LLMServingArgs in
// args. What raytpu resolves is sent resolved: the accelerator type as
// Ray's (v6e becomes TPU-V6E) and the accelerator config's kind always, so
// Ray infers nothing raytpu did not.
//
// # A replica's TPU slice
//
// With AcceleratorConfig{Kind: TPU, Topology: "4x4"}, Serve LLM defers
// the replica's placement group: the Serve replica is a small actor that
// may run on any node, and when it starts it reserves the whole slice
// with ray.util.tpu.slice_placement_group (a head reservation, then
// bundles pinned to that slice that together hold all its chips), whatever
// tensor_parallel_size is. Each bundle is the engine's first TPU bundle:
// by default {TPU: min(tp×pp, chips per host), accelerator_type:<type>:
// 0.001} plus CPU: 1, or PlacementGroupConfig's; with tp×pp 1 that is one
// bundle per chip (8 on a v4 2x2x2), not one per host. The plan holds one slice
// group per replica (Part role Replica, named LLMServer:<name>, Index =
// replica index), as many as the deployment may scale to (Serve LLM
// autoscales between 1 and 1 replicas by default), so a backend or the
// simulator can check that the cluster holds them. The head reservation
// is never released while the replica lives, and the slice goes when the
// replica does.
//
// # Differences from Ray
//
// raytpu compiles TPU and CPU models only (a GPU accelerator type, GPU
// bundles, or nothing at all, which Ray serves on a GPU, are errors). It
// also refuses, where Ray would fail later or silently: a model source
// with a URI scheme Serve LLM does not download from, a topology on kind
// cpu, more chips than the slice holds, a local working_dir or py_modules
// in an LLM config's runtime_env (no backend uploads it from inside
// args), and two models whose deployment names collide. The engine
// kwargs vLLM rejects at start (an unknown key) are not checked. The
// fields that name Python classes (server_cls, callback_config, a
// per-request router class object) are not mirrored; RequestRouterConfig
// names its router by import path.
//
// Ray 2.60 checks the topology, the slice's bundles and the chips per
// host only when a replica starts and reserves its slice (a bad topology
// is accepted by LLMConfig and build_openai_app, then fails the replica);
// raytpu checks them at compile time.
//
// The package compiles only; deploying a plan is a backend's job. It
// imports field, placement, rayvocab, runtimeenv, serve, serveconfig and
// tpu, and never a backend or another front end.
package llm
