// Command llm serves a language model with Ray Serve LLM from Go (package
// serve/llm): an OpenAI-compatible application whose replicas each reserve
// a whole TPU slice, queried with serve/client's OpenAI client, the reply
// streamed token by token.
//
// The same application deploys on any backend; only --backend changes. By
// default it is placed on the simulated TPU cluster, which prints where
// each replica's slice would land; nothing runs:
//
//	go run ./examples/llm
//	go run ./examples/llm --cluster v4-16,cpu:1   # a second replica finds no free slice
//
// With --backend ray it is deployed through a Ray cluster's dashboard
// whose nodes have Ray Serve LLM's engine installed (ray[llm], vLLM), then
// asked one chat question through Serve's HTTP proxy:
//
//	go run ./examples/llm --backend ray --address http://127.0.0.1:8265 \
//	    --model-source /models/my-model --proxy http://127.0.0.1:8000 --prompt "Hello"
//
// With --backend kuberay it is a KubeRay RayService in the cluster of the
// kubeconfig (the image must hold the engine: --image of `raytpu render`,
// or kuberay.Options.Image); --proxy is then the RayService's serve
// Service (<name>-serve-svc, port 8000), e.g. through kubectl port-forward.
//
// Serve LLM reserves each replica's slice when the replica starts (its
// deferred slice placement group): a reservation that cannot be met shows
// as the replica's pending slice head, which `raytpu serve wait` and the
// simulator report in the same words.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

type config struct {
	Backend     string // "sim", "ray" or "kuberay"
	Address     string // Ray dashboard URL, with Backend "ray"
	Kubeconfig  string // with Backend "kuberay" (default: kubectl's rules)
	Namespace   string // with Backend "kuberay" (default: the context's)
	Proxy       string // Serve's HTTP proxy URL, where the OpenAI API is
	Cluster     string // simulated cluster spec
	Name        string // application name
	ModelID     string
	ModelSource string // a local path or a Hugging Face ID the nodes can load
	Accelerator string
	Topology    string
	Replicas    int
	TP          int // tensor_parallel_size
	Prompt      string
	MaxTokens   int
	Delete      bool
	Timeout     time.Duration
}

func defaults() config {
	return config{
		Backend: "sim", Address: "http://127.0.0.1:8265", Proxy: "http://127.0.0.1:8000",
		Cluster: "2*v4-16,cpu:1", Name: "chat", ModelID: "tiny", ModelSource: "/models/tiny",
		Accelerator: "v4", Topology: "2x2x2", Replicas: 2, TP: 4,
		Prompt: "Say hello in five words.", MaxTokens: 32, Timeout: 15 * time.Minute,
	}
}

// application is the Serve LLM application: one model, each replica on a
// slice of its own, tensor-parallel over TP chips.
func application(cfg config) llm.OpenAIApp {
	return llm.OpenAIApp{
		Name: cfg.Name, RoutePrefix: "/",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: cfg.ModelID, ModelSource: cfg.ModelSource},
			AcceleratorType:    cfg.Accelerator,
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.TPU, Topology: cfg.Topology},
			EngineKwargs:       map[string]any{"tensor_parallel_size": cfg.TP},
			DeploymentConfig:   llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(cfg.Replicas)},
		}},
	}
}

// newBackend is the only place the program chooses where it runs.
func newBackend(cfg config) (backend.Server, error) {
	switch cfg.Backend {
	case "sim":
		spec, err := sim.ParseSpec(cfg.Cluster)
		if err != nil {
			return nil, err
		}
		return sim.NewCluster(spec)
	case "ray":
		c, err := ray.NewClient(cfg.Address)
		if err != nil {
			return nil, err
		}
		return raybackend.New(c)
	case "kuberay":
		rc, ns, err := kuberay.LoadConfig(cfg.Kubeconfig, "")
		if err != nil {
			return nil, err
		}
		if cfg.Namespace != "" {
			ns = cfg.Namespace
		}
		return kuberay.New(rc, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	}
	return nil, fmt.Errorf("--backend %q: want sim, ray or kuberay", cfg.Backend)
}

// run deploys the application and waits for it; on a backend that runs
// it, it streams one chat answer to out. It returns the last status.
func run(ctx context.Context, cfg config, out io.Writer) (*backend.ServiceStatus, error) {
	app := application(cfg)
	if _, err := app.Compile(); err != nil {
		return nil, err // every problem, before any backend is reached
	}
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	st, err := app.Run(ctx, b, &backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) {
		first, _, _ := strings.Cut(s.Message, "\n")
		fmt.Fprintf(out, "%s application %s: %s %s\n", time.Now().Format(time.TimeOnly), s.Name, s.State, first)
	}})
	if st != nil {
		for _, l := range st.Landings {
			fmt.Fprintf(out, "%s bundle %d -> %s (slice %s, %s)\n", l.Part, l.Bundle, l.Node, l.SliceName, l.State)
		}
	}
	if err != nil {
		return st, err
	}
	if !st.Ran {
		fmt.Fprintln(out, "simulator: nothing runs, and there is no OpenAI endpoint to ask")
		return st, nil
	}
	err = ask(ctx, cfg, out)
	if cfg.Delete {
		err = errors.Join(err, serve.Delete(ctx, b, cfg.Name))
	}
	return st, err
}

// ask streams one chat completion: each chunk's text as it arrives.
func ask(ctx context.Context, cfg config, out io.Writer) error {
	c, err := client.NewOpenAI(cfg.Proxy)
	if err != nil {
		return err
	}
	s, err := c.ChatCompletionStream(ctx, client.ChatCompletionRequest{
		Model:    cfg.ModelID,
		Messages: []client.ChatMessage{{Role: "user", Content: cfg.Prompt}},
		Sampling: client.Sampling{MaxTokens: cfg.MaxTokens},
	})
	if err != nil {
		return err
	}
	defer s.Close()
	for s.Next() {
		for _, ch := range s.Current().Choices {
			fmt.Fprint(out, ch.Delta.Content)
		}
	}
	fmt.Fprintln(out)
	return s.Err()
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Backend, "backend", cfg.Backend, "where to deploy: sim (the simulated TPU cluster; nothing runs), ray (a Ray cluster at --address) or kuberay (a RayService on Kubernetes)")
	flag.StringVar(&cfg.Address, "address", cfg.Address, "Ray dashboard URL, with --backend ray")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig, with --backend kuberay (default: $KUBECONFIG, ~/.kube/config)")
	flag.StringVar(&cfg.Namespace, "namespace", "", "namespace, with --backend kuberay (default: the kubeconfig context's)")
	flag.StringVar(&cfg.Proxy, "proxy", cfg.Proxy, "Serve's HTTP proxy URL, where the OpenAI API answers")
	flag.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "simulated cluster spec, with --backend sim")
	flag.StringVar(&cfg.Name, "name", cfg.Name, "application name")
	flag.StringVar(&cfg.ModelID, "model-id", cfg.ModelID, "the model's ID in the OpenAI API")
	flag.StringVar(&cfg.ModelSource, "model-source", cfg.ModelSource, "where the engine loads the model: a path on the nodes or a Hugging Face ID")
	flag.StringVar(&cfg.Accelerator, "accelerator", cfg.Accelerator, "TPU generation (v4, v5e, v5p, v6e, v7x, ...)")
	flag.StringVar(&cfg.Topology, "topology", cfg.Topology, "slice topology each replica reserves")
	flag.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas, each on a slice of its own")
	flag.IntVar(&cfg.TP, "tp", cfg.TP, "tensor_parallel_size: chips one model copy spans")
	flag.StringVar(&cfg.Prompt, "prompt", cfg.Prompt, "the question asked once the application runs")
	flag.IntVar(&cfg.MaxTokens, "max-tokens", cfg.MaxTokens, "the answer's token limit")
	flag.BoolVar(&cfg.Delete, "delete", false, "delete the application after the question")
	flag.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "how long to wait for the application (the engine loads the model first)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "llm:", err)
		os.Exit(1)
	}
	if !st.Ran {
		fmt.Printf("simulated: application %s is %s; nothing runs\n", st.Name, st.State)
	}
}
