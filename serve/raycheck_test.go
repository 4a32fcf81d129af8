package serve

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/serve/internal/freeform"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/tpu"
)

// deliberateDifferences lists the specs raytpu rejects although Ray's Serve
// schema and deploy step accept the equivalent raw config, with the reason.
// The cross-check asserts that Ray does accept each of them, so the list
// stays true.
var deliberateDifferences = map[string]string{
	"duplicate deployment":                "Ray applies both overrides and the last wins; raytpu rejects the ambiguity",
	"reserved user config key":            "raytpu_slice is raytpu's key for the slice a replica reserves; Ray knows no such key",
	"no route with prefix":                "NoRoute is raytpu's spelling of route_prefix null; both cannot hold",
	"topology without accelerator":        "topology is raytpu's (Serve LLM's) option; Ray's Serve schema has none",
	"topology typo":                       "the catalog's topology rules: Ray's Serve schema does not know topologies",
	"topology gke only":                   "GKE provisions v4 4x4x20 but Ray's slice placement rejects it; Serve's schema does not check",
	"heterogeneous bundles with topology": "Serve LLM's rule for a slice's bundles; Serve's schema accepts mixed bundles",
	"chips do not divide into bundles":    "slice placement's rule; Serve does not check TPU amounts inside bundles",
	"gpu kind":                            "raytpu compiles TPU deployments only",
	"head timeout without topology":       "the head timeout bounds the slice reservation of raytpu's replica runtime; without a topology there is none",
	"unknown accelerator":                 "the TPU catalog; Ray's accelerator_type is any string",
	"accelerator type mismatch":           "raytpu's accelerator config and the actor's accelerator_type must agree",
	"actor tpu with topology":             "with a topology the slice holds the TPU; Ray would let the actor hold chips outside it",
	"bundle selector with topology":       "with a topology the slice pins its own bundles",
}

// rayRejectsAccepted lists the specs raytpu accepts whose compiled config
// Ray rejects as it stands, with the reason; the cross-check asserts both.
var rayRejectsAccepted = map[string]string{
	"local working dir": "a local working_dir is uploaded by the backend, which puts its gcs:// URI in the config before it reaches Ray",
}

// rawConfig is the Serve config a spec would send without raytpu's checks,
// so that Ray's verdict on an invalid spec can be compared with raytpu's.
func rawConfig(a Application) *serveconfig.Application {
	out := &serveconfig.Application{Name: a.Name, ImportPath: a.ImportPath, RuntimeEnv: envOrNil(&a.RuntimeEnv), Args: a.Args}
	if out.Name == "" {
		out.Name = DefaultName
	}
	if a.RoutePrefix != "" {
		out.RoutePrefix = []byte(strconv.Quote(a.RoutePrefix))
	} else if a.NoRoute {
		out.RoutePrefix = []byte("null")
	}
	out.Deployments = make([]serveconfig.Deployment, len(a.Deployments))
	for i := range a.Deployments {
		// The user_config goes as it is, valid or not.
		d := a.Deployments[i]
		uc := d.UserConfig
		d.UserConfig = nil
		accel := ""
		if d.AcceleratorConfig != nil {
			if g, ok := tpu.LookupGeneration(d.AcceleratorConfig.Accelerator); ok {
				accel = g.RayAcceleratorType()
			}
		}
		if err := d.rayConfig(&out.Deployments[i], accel, nil); err != nil {
			panic(err) // without a user_config, nothing can fail
		}
		out.Deployments[i].UserConfig = uc
	}
	return out
}

type rayVerdict struct {
	ID      string   `json:"id"`
	Stage   string   `json:"stage"`
	Error   string   `json:"error"`
	Dropped []string `json:"dropped"`
}

// TestConfigsAreRays validates, in one Python process, every compiled
// config of specCases with the installed Ray's own Serve classes
// (ServeDeploySchema, then the controller's override_deployment_info), and
// checks that Ray rejects the raw config of every spec raytpu rejects,
// unless deliberateDifferences says why not.
func TestConfigsAreRays(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	type entry struct {
		ID     string          `json:"id"`
		Config json.RawMessage `json:"config"`
	}
	var req struct {
		Configs []entry `json:"configs"`
	}
	for _, tc := range specCases {
		var (
			cfg  []byte
			merr error
		)
		if plan, err := tc.app.Compile(); err == nil {
			cfg, merr = plan.Serve.Config.MarshalJSON()
		} else {
			cfg, merr = freeform.Marshal(rawConfig(tc.app))
		}
		if merr != nil {
			t.Fatalf("%s: %v", tc.name, merr)
		}
		req.Configs = append(req.Configs, entry{ID: tc.name, Config: cfg})
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), py, filepath.Join("testdata", "raycheck.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("raycheck.py: %v\n%s", err, stderr.String())
	}
	var resp struct {
		RayVersion string       `json:"ray_version"`
		Results    []rayVerdict `json:"results"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("raycheck.py output: %v\n%s", err, out)
	}
	if resp.RayVersion != "2.60.0" {
		t.Errorf("installed Ray %s; the rules mirror 2.60.0", resp.RayVersion)
	}
	if len(resp.Results) != len(specCases) {
		t.Fatalf("%d verdicts for %d specs", len(resp.Results), len(specCases))
	}
	var agreeRejected int
	for i, tc := range specCases {
		v := resp.Results[i]
		if v.ID != tc.name {
			t.Fatalf("verdict %d is for %q, want %q", i, v.ID, tc.name)
		}
		if os.Getenv("RAYCHECK_VERBOSE") != "" {
			t.Logf("%-40s %-6s %.160s", tc.name, v.Stage, v.Error)
		}
		if len(v.Dropped) > 0 {
			t.Errorf("%s: Ray drops unknown keys %v", tc.name, v.Dropped)
		}
		why, deliberate := deliberateDifferences[tc.name]
		reverse, rayRejects := rayRejectsAccepted[tc.name]
		switch {
		case tc.want == nil && rayRejects:
			if v.Stage == "ok" {
				t.Errorf("%s: listed as rejected by Ray (%s), but Ray accepts it", tc.name, reverse)
			}
		case tc.want == nil:
			if v.Stage != "ok" {
				t.Errorf("%s: raytpu accepts it, Ray rejects the compiled config at %s: %s", tc.name, v.Stage, v.Error)
			}
		case deliberate:
			if v.Stage != "ok" {
				t.Errorf("%s: listed as a deliberate difference (%s), but Ray rejects it too at %s: %s", tc.name, why, v.Stage, v.Error)
			}
		default:
			if v.Stage == "ok" {
				t.Errorf("%s: raytpu rejects it (%v), Ray accepts the raw config; fix the rule or list it in deliberateDifferences", tc.name, tc.want)
			} else {
				agreeRejected++
			}
		}
	}
	t.Logf("Ray %s: %d specs, %d rejected by both, %d deliberate differences", resp.RayVersion, len(specCases), agreeRejected, len(deliberateDifferences))
}
