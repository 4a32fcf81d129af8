// Package tslpb holds the Go code generated from raytpu's subset of the
// XLA/TSL profiler protos (proto/raytpu/profiler/v1): the ProfilerService
// client that jax.profiler.start_server answers, and the XSpace trace
// format. generate.sh regenerates it (go generate runs it); a test proves
// the committed files are byte for byte what it produces.
package tslpb

//go:generate ./generate.sh
