// Package client calls models served by Ray Serve, through Serve's HTTP
// and gRPC proxies.
//
// [HTTP] sends JSON to an application's route prefix and decodes the JSON
// answer; a non-2xx answer is an [*HTTPError] carrying the status code and
// Ray's body, which errors.Is maps onto [ErrNotFound] (404: no application
// has the route), [ErrUnavailable] (503, 429: backpressure or no replica),
// [ErrTimeout] (408: Serve's request_timeout_s) and [ErrInternal] (500:
// the deployment raised). A ctx that ends first is the ctx's error.
//
// [OpenAI] calls a Ray Serve LLM application's OpenAI-compatible API
// (build_openai_app, package serve/llm): [OpenAI.ChatCompletion],
// [OpenAI.Completion], [OpenAI.Models], and the streamed forms
// [OpenAI.ChatCompletionStream] and [OpenAI.CompletionStream], whose
// [Stream] hands over each server-sent event's chunk as it arrives and
// closes the response body as soon as its ctx ends or it is closed, which
// ends the request on the server. An error answer in the API's format
// ({"error": {"message", "type", "param", "code"}}), before a stream or as
// an event inside one, is an [*OpenAIError], which maps onto the same
// sentinels; so is FastAPI's {"detail": "..."}, which Serve LLM's ingress
// answers for a model it does not serve.
//
// For gRPC, Serve's proxy routes a call to the ingress deployment of the
// application named by the "application" metadata key, and to the method
// of the RPC's name. [UnaryInterceptor] and [StreamInterceptor] set that
// metadata (and optionally request_id, multiplexed_model_id, session_id)
// on every call of a connection, so any generated stub works unchanged;
// the call options [Application], [RequestID], [MultiplexedModelID] and
// [SessionID] override them for one call. [NewGRPC] builds a connection
// with both interceptors. A failed call is a [*GRPCError], which keeps
// its gRPC status (status.FromError and status.Code work) and maps onto
// the same sentinels: NOT_FOUND → ErrNotFound, UNAVAILABLE and
// RESOURCE_EXHAUSTED → ErrUnavailable, DEADLINE_EXCEEDED → ErrTimeout,
// INTERNAL → ErrInternal.
//
// [NewGRPC]'s transport is grpc-go's own, reading and writing the socket
// through Go's net package, with grpc-go's flow control. Flow-control
// windows, keepalive and the like are grpc.DialOption values passed
// through [WithDialOptions]. Fixed windows (grpc.WithInitialWindowSize(4<<20)
// and grpc.WithInitialConnWindowSize(16<<20)) turn off grpc-go's
// bandwidth-delay-product PINGs: on a shared 2-core machine they took the
// client's CPU per call through Serve's proxy from 0.48 to 0.33 ms with
// 16-float32 tensors and from 4.0 to 3.7 ms with 1 MiB ones, requests/s
// unchanged within noise (the proxy bounds it); they also cap a link
// whose bandwidth-delay product exceeds them, so they are not the default.
// bench/servegrpcbench/vs-python.sh compares NewGRPC's requests/s and
// client CPU per call with fixed windows, with a bare grpc-go connection
// and with Python's grpcio.
//
// Serve 2.60 sends every call to the only application when exactly one is
// deployed, whatever "application" says; with two or more, a call without
// it fails NOT_FOUND.
//
// Serve's proxies do no authentication. raytpu's own service, Predictor
// (named tensors in and out), is in package serve/servev1.
//
// The package speaks HTTP and gRPC only: it imports nothing of raytpu's
// (no front end, plan or backend), so a program that only queries a model
// links none of them. Being code a user embeds, it imports neither unsafe
// nor syscall nor golang.org/x/sys (imports_test.go keeps it so).
package client
