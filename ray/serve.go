package ray

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The Serve REST API of Ray 2.60, as checked against the installed
// dashboard (ray/dashboard/modules/serve/serve_head.py) and real Serve:
//
//   - GET /api/serve/applications/ answers the status document; with Serve
//     not running, {"controller_info": {}, "proxies": {}, "applications":
//     {}, "target_capacity": null}. A controller that does not answer is a
//     503 ("... please retry later").
//   - PUT /api/serve/applications/ validates the whole config (HTTP 400 with
//     pydantic's report, before Serve is started), starts Serve if needed,
//     applies the config synchronously (the application exists when the PUT
//     is answered, with an empty 200) and deploys in the background.
//     Applications deployed earlier through the PUT and missing from it are
//     deleted. Every application in the PUT shows DEPLOYING until the
//     controller's next loop, even when its config is unchanged; its
//     replicas are kept when import_path, runtime_env and args are.
//   - deployed_app_config echoes the submitted application (only the keys
//     that were set, unknown keys dropped).
//   - DELETE /api/serve/applications/ is serve.shutdown(): all of Serve, the
//     applications deployed from Python included. It succeeds when Serve is
//     not running, and returns once Serve is down.
//   - Paths need the trailing slash.

// servePath is the Serve REST resource. Ray 2.60 matches paths exactly: the
// trailing slash is required (without it the dashboard answers 404).
const servePath = "/api/serve/applications/"

// Proxy locations (ServeDeployConfig.ProxyLocation).
const (
	ProxyDisabled  = "Disabled"
	ProxyHeadOnly  = "HeadOnly"
	ProxyEveryNode = "EveryNode"
)

// ServeDeployConfig is the body of PUT /api/serve/applications/ (Ray's
// ServeDeploySchema): the whole declarative set of Serve applications.
// Zero fields are left out and take Ray's defaults.
//
// Applications are raw JSON objects (Ray's ServeApplicationSchema), sent
// byte for byte as given: a config compiled elsewhere reaches Ray exactly
// as it was built, unknown keys and all (Ray 2.60 drops unknown keys
// silently rather than rejecting them).
type ServeDeployConfig struct {
	// ProxyLocation is "Disabled", "HeadOnly" or "EveryNode". Default
	// (empty): Ray's default, "EveryNode".
	ProxyLocation string `json:"proxy_location,omitempty"`
	// HTTPOptions and GRPCOptions apply only when this PUT starts Serve:
	// Ray ignores changes to them (it logs a warning) while Serve runs.
	HTTPOptions *ServeHTTPOptions `json:"http_options,omitempty"`
	GRPCOptions *ServeGRPCOptions `json:"grpc_options,omitempty"`
	// LoggingConfig, ControllerOptions and TracingConfig are passed
	// through verbatim when set. ControllerOptions apply only when the
	// controller is created.
	LoggingConfig     json.RawMessage `json:"logging_config,omitempty"`
	ControllerOptions json.RawMessage `json:"controller_options,omitempty"`
	TracingConfig     json.RawMessage `json:"tracing_config,omitempty"`
	// TargetCapacity, a percentage in [0, 100], scales every deployment's
	// replica counts. Nil: no scaling.
	TargetCapacity *float64 `json:"target_capacity,omitempty"`
	// Applications is the complete list of applications deployed through
	// this API: an application deployed earlier through it and missing
	// here is deleted. Each entry is one JSON object.
	Applications []json.RawMessage `json:"applications"`
}

// ServeHTTPOptions is Ray's HTTPOptionsSchema (the HTTP proxy). Zero fields
// take Ray's defaults (host 0.0.0.0, port 8000, keep-alive 90 s).
type ServeHTTPOptions struct {
	Host               string   `json:"host,omitempty"`
	Port               int      `json:"port,omitempty"`
	RootPath           string   `json:"root_path,omitempty"`
	RequestTimeoutS    *float64 `json:"request_timeout_s,omitempty"`
	KeepAliveTimeoutS  int      `json:"keep_alive_timeout_s,omitempty"`
	SSLKeyfile         string   `json:"ssl_keyfile,omitempty"`
	SSLCertfile        string   `json:"ssl_certfile,omitempty"`
	SSLKeyfilePassword string   `json:"ssl_keyfile_password,omitempty"`
	SSLCACerts         string   `json:"ssl_ca_certs,omitempty"`
}

// ServeGRPCOptions is Ray's gRPCOptionsSchema. The gRPC proxy starts only
// when Port > 0 and GRPCServicerFunctions is non-empty.
type ServeGRPCOptions struct {
	// Port defaults to 9000.
	Port                  int      `json:"port,omitempty"`
	GRPCServicerFunctions []string `json:"grpc_servicer_functions,omitempty"`
	RequestTimeoutS       *float64 `json:"request_timeout_s,omitempty"`
	// EnableReflection defaults to true.
	EnableReflection *bool `json:"enable_reflection,omitempty"`
}

// MarshalJSON encodes the config with every application's bytes exactly as
// given (encoding/json would re-compact and HTML-escape a RawMessage). It
// fails when an application is not a JSON object.
func (c ServeDeployConfig) MarshalJSON() ([]byte, error) {
	for i, a := range c.Applications {
		if err := checkAppObject(a); err != nil {
			return nil, fmt.Errorf("applications[%d]: %w", i, err)
		}
	}
	type plain ServeDeployConfig // no MarshalJSON: encodes the envelope
	env := plain(c)
	env.Applications = nil
	head, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	// head ends in `"applications":null}`; splice the list in verbatim.
	const tail = `"applications":null}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		return nil, fmt.Errorf("ray: encoding ServeDeployConfig: unexpected envelope %s", head)
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-len(tail)])
	b.WriteString(`"applications":[`)
	for i, a := range c.Applications {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(a)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// checkAppObject reports whether a is one JSON object.
func checkAppObject(a json.RawMessage) error {
	t := bytes.TrimSpace(a)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return fmt.Errorf("%w: an application must be a JSON object, got %s", ErrInvalid, abbrev(a))
	}
	return nil
}

func abbrev(b []byte) string {
	if len(b) > 80 {
		return fmt.Sprintf("%q...", b[:80])
	}
	return fmt.Sprintf("%q", b)
}

// ServeApplications returns Serve's status document (GET
// /api/serve/applications/): every application with its deployments and
// replicas. When Serve is not running, Applications is empty. The read is
// retried like every safe call.
func (c *Client) ServeApplications(ctx context.Context) (ServeDetails, error) {
	if err := c.check("ServeApplications"); err != nil {
		return ServeDetails{}, err
	}
	var d ServeDetails
	err := c.getJSON(ctx, servePath, &d)
	return d, err
}

// DeployServeApplications replaces the whole declarative set of Serve
// applications with cfg (PUT /api/serve/applications/), starting Serve
// when it is not running. Applications deployed earlier through this API
// and missing from cfg are deleted; applications deployed from Python
// (serve.run) are left alone. The PUT returns once Ray has accepted the
// config; the deploy continues in the background (see
// WaitServeApplication). A working_dir or py_modules entry that is a
// local path is refused with ErrInvalid: upload it first with
// PrepareRuntimeEnv.
//
// Ray rejects an invalid config with HTTP 400 (ErrInvalid) and its
// pydantic message.
func (c *Client) DeployServeApplications(ctx context.Context, cfg ServeDeployConfig) error {
	if err := c.check("DeployServeApplications"); err != nil {
		return err
	}
	for i, a := range cfg.Applications {
		if err := checkServeApp(fmt.Sprintf("applications[%d]", i), a); err != nil {
			return fmt.Errorf("ray: DeployServeApplications: %w", err)
		}
	}
	body, err := cfg.MarshalJSON()
	if err != nil {
		return fmt.Errorf("ray: DeployServeApplications: %w", err)
	}
	// The PUT is retried: a full declarative config is idempotent in Ray.
	// Applying the same config again sets the same target state; an
	// application whose import_path, runtime_env and args are unchanged is
	// not rebuilt and keeps its replicas. A retry after a lost answer
	// therefore lands where the first attempt would have. (A concurrent
	// writer is overwritten either way: Ray's PUT is last-writer-wins.)
	_, _, err = c.do(ctx, request{method: http.MethodPut, path: servePath, body: body, ctype: "application/json", retry: true, slow: true})
	return serveError(err)
}

// serveError gives a rejected Serve config (HTTP 400, whose body is
// pydantic's multi-line report) a one-line message that keeps every
// validation error. The error stays an *APIError.
func serveError(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		return err
	}
	var parts []string
	for _, l := range strings.Split(ae.Body, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, " [type="); i >= 0 {
			l = l[:i]
		}
		if l == "" || strings.HasPrefix(l, "For further information visit") {
			continue
		}
		parts = append(parts, l)
	}
	msg := strings.Join(parts, "; ")
	if len(msg) > 2048 {
		msg = msg[:2048] + "..."
	}
	cp := *ae
	cp.Message = msg
	return &cp
}

// ShutdownServe shuts down all of Serve (DELETE /api/serve/applications/):
// every application, whether deployed through this API or from Python,
// the proxies and the controller. Shutting down a Serve that is not
// running succeeds, so the call is retried like every safe call.
func (c *Client) ShutdownServe(ctx context.Context) error {
	if err := c.check("ShutdownServe"); err != nil {
		return err
	}
	_, _, err := c.do(ctx, request{method: http.MethodDelete, path: servePath, retry: true, slow: true})
	return err
}
