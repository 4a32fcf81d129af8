package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// Model is the model ID the application serves.
const Model = "tiny"

// tinyApp serves the tiny model in dir on vLLM's CPU engine. Its options
// are those of tinyApp in serve/llm/serving_test.go, the application
// serve/llm's test against real Ray serves: one replica, a 1 GiB KV
// cache, float32, eager mode, max_model_len 512, at most 4 sequences, and
// the engine logging each request.
func tinyApp(dir string) llm.OpenAIApp {
	return llm.OpenAIApp{
		Name: Model, RoutePrefix: "/",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: Model, ModelSource: dir},
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.CPU},
			EngineKwargs: map[string]any{
				"dtype": "float32", "enforce_eager": true, "max_model_len": 512,
				"max_num_seqs": 4, "enable_log_requests": true,
			},
			DeploymentConfig: llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(1)},
			RuntimeEnv:       runtimeenv.RuntimeEnv{EnvVars: map[string]string{"VLLM_CPU_KVCACHE_SPACE": "1"}},
		}},
	}
}

// startCluster starts a detached head-only cluster of venv with 4 CPUs
// (serve/llm's test cluster), writes its state and prints its dashboard
// URL.
func startCluster(ctx context.Context, state, venv string) error {
	if venv == "" {
		return fmt.Errorf("-venv is required: the LLM virtualenv (scripts/setup-venv-llm.sh)")
	}
	url, err := raycluster.StartDetached(ctx, raycluster.Config{Venv: venv, HeadCPUs: 4}, state)
	if err != nil {
		return err
	}
	fmt.Println(url)
	return nil
}

// deployApp starts Serve if it is not running, deploys tinyApp(model),
// waits until it is RUNNING and prints the OpenAI API's base URL.
func deployApp(ctx context.Context, address, model string) error {
	if model == "" {
		return fmt.Errorf("-model is required: a directory made by serve/llm/testdata/make_tiny_model.py")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	rc, err := ray.NewClient(address)
	if err != nil {
		return err
	}
	u, err := url.Parse(address)
	if err != nil {
		return err
	}
	base, err := ensureServe(ctx, rc, u.Hostname())
	if err != nil {
		return err
	}
	b, err := raybackend.New(rc)
	if err != nil {
		return err
	}
	st, err := tinyApp(model).Run(ctx, b, &backend.WaitOptions{StuckAfter: 5 * time.Minute})
	if err != nil {
		return fmt.Errorf("deploying the tiny model: %w (status %+v)", err, st)
	}
	if st.State != backend.ServiceRunning {
		return fmt.Errorf("deploying the tiny model: status %+v, want RUNNING", st)
	}
	fmt.Println(base)
	return nil
}

// ensureServe starts Serve with its HTTP proxy on the head only, on a free
// port of host (as raytest.StartServe does for the tests), and returns the
// proxy's base URL; when Serve runs already it returns the running
// proxy's (Ray ignores new proxy options while Serve runs).
func ensureServe(ctx context.Context, rc *ray.Client, host string) (string, error) {
	d, err := rc.ServeApplications(ctx)
	if err != nil {
		return "", err
	}
	if d.Running() {
		port := 8000
		if h := d.HTTPOptions; h != nil && h.Port != 0 {
			port = h.Port
		}
		return "http://" + net.JoinHostPort(host, strconv.Itoa(port)), nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	err = rc.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: host, Port: port},
		Applications:  []json.RawMessage{},
	})
	if err != nil {
		return "", fmt.Errorf("starting Serve: %w", err)
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)), nil
}
