package serve

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve/internal/freeform"
)

// GRPCOptions mirrors the top-level grpc_options of Serve's declarative
// config (gRPCOptionsSchema): the gRPC proxy that Serve starts next to the
// HTTP proxy. Like http_options, it is Serve-wide, not per application,
// and Ray applies it only when Serve starts: a PUT that changes it while
// Serve runs is ignored (Ray logs a warning). Its JSON is Ray's.
type GRPCOptions struct {
	// Port of the gRPC proxy on every node that runs a proxy. Optional.
	// Default: 9000.
	Port int `json:"port,omitempty"`
	// ServicerFunctions are the import paths of the generated Python
	// add_<Service>Servicer_to_server functions whose services the proxy
	// serves, e.g. servev1.ServicerFunction. The proxy runs in the
	// cluster's base Python (no runtime_env), so each must be importable
	// there. Required: without one Ray starts no gRPC proxy.
	ServicerFunctions []string `json:"grpc_servicer_functions"`
	// RequestTimeoutS ends a request that takes longer with
	// DEADLINE_EXCEEDED. Optional. Default: no timeout.
	RequestTimeoutS *float64 `json:"request_timeout_s,omitempty"`
	// EnableReflection serves the gRPC reflection service. Optional.
	// Default: true.
	EnableReflection *bool `json:"enable_reflection,omitempty"`
}

// Compile validates o and returns grpc_options exactly as Ray's Serve REST
// API takes it (the value of "grpc_options" in the body of PUT
// /api/serve/applications/), with unset options left out so that Ray's
// defaults apply. Problems come back together as a field.ErrorList with
// paths under "grpc_options", spelled as Ray's config file spells them.
//
// Ray's schema accepts any port and an empty servicer list, and then
// silently starts no gRPC proxy; raytpu rejects both.
func (o GRPCOptions) Compile() (json.RawMessage, error) {
	root := field.NewPath("grpc_options")
	var errs field.ErrorList
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, field.Invalid(root.Child("port"), o.Port, "must be a TCP port in [1, 65535] (0: Ray's default, 9000)"))
	}
	if len(o.ServicerFunctions) == 0 {
		errs = append(errs, field.Required(root.Child("grpc_servicer_functions"),
			`at least one add_<Service>Servicer_to_server import path, e.g. "raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"; without one Ray starts no gRPC proxy`))
	}
	for i, f := range o.ServicerFunctions {
		p := root.Child("grpc_servicer_functions").Index(i)
		switch {
		case f == "":
			errs = append(errs, field.Required(p, "an import path such as module.add_FooServicer_to_server"))
		case importPathRule(f) != "":
			errs = append(errs, field.Invalid(p, f, importPathRule(f)))
		}
	}
	if t := o.RequestTimeoutS; t != nil && !(*t > 0) {
		errs = append(errs, field.Invalid(root.Child("request_timeout_s"), *t, "must be > 0 seconds; leave it unset for no timeout"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c := o
	c.ServicerFunctions = slices.Clone(o.ServicerFunctions)
	raw, err := freeform.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("serve: encoding grpc_options: %w", err)
	}
	return raw, nil
}
