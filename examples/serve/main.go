// Command serve deploys a tiny JAX model with raytpu's serve package: each
// replica owns a whole v4 2x2x2 TPU slice (two hosts), runs the model as
// one JAX program over both hosts, and answers HTTP requests and gRPC
// calls of raytpu's Predictor service (package serve/servev1), queried
// with package serve/client.
//
// The same application deploys on any backend; only the --backend flag
// changes. By default it is placed on the simulated TPU cluster, which
// prints where each replica's slice would land; nothing runs, and the
// simulator has no endpoints to query:
//
//	go run ./examples/serve
//
// With --backend ray it is deployed for real through a Ray cluster's
// dashboard (for example one started by `raytpu dev-cluster up --spec
// 2*v4-16`) and queried through Serve's HTTP proxy and its gRPC proxy. If
// Serve is not running yet, the program starts it with both proxies
// (grpc_options from serve.GRPCOptions, serving servev1.ServicerFunction).
// Serve's gRPC proxy imports the generated Python without a runtime_env,
// so every node needs it on PYTHONPATH before `ray start`:
//
//	go run ./examples/serve --write-python /opt/raytpu-py   # on each node, or bake into the image
//	PYTHONPATH=/opt/raytpu-py ray start ...
//	go run ./examples/serve --backend ray --address http://127.0.0.1:8265 --proxy http://127.0.0.1:8000 --grpc 127.0.0.1:9000
//
// With --backend kuberay it is deployed as a KubeRay RayService in the
// cluster of the kubeconfig; --proxy is then the RayService's serve
// Service (<name>-serve-svc, port 8000), e.g. through kubectl port-forward:
//
//	go run ./examples/serve --backend kuberay --namespace ml --proxy http://127.0.0.1:8000
//
// The model (model/linear.py) applies raytpu_replica.tpu_slice under
// @serve.deployment; raytpu's Ray backend ships that module with the
// application (see package serve, "The replica runtime").
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/servev1"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

//go:embed model/linear.py
var modelFS embed.FS

type config struct {
	Backend      string // "sim", "ray" or "kuberay"
	Address      string // Ray dashboard URL, with Backend "ray"
	Kubeconfig   string // kubeconfig path, with Backend "kuberay" (default: kubectl's rules)
	Namespace    string // namespace, with Backend "kuberay" (default: the context's)
	Proxy        string // Serve's HTTP proxy URL, with Backend "ray"
	GRPC         string // Serve's gRPC proxy host:port, with Backend "ray"
	Cluster      string // simulated cluster spec
	Name         string
	Replicas     int
	Accelerator  string
	Topology     string
	JAXPlatforms string // JAX_PLATFORMS of the replicas' processes ("" leaves it unset)
	X            []float64
	Delete       bool // delete the application after the query
	Timeout      time.Duration
}

func defaults() config {
	return config{
		Backend: "sim", Address: "http://127.0.0.1:8265", Proxy: "http://127.0.0.1:8000", GRPC: "127.0.0.1:9000", Cluster: "2*v4-16",
		Name: "linear", Replicas: 2, Accelerator: "v4", Topology: "2x2x2", JAXPlatforms: "cpu",
		X: []float64{1, 2, 3}, Timeout: 5 * time.Minute,
	}
}

// answer is the model's reply.
type answer struct {
	Y         []float64 `json:"y"`
	HostSum   float64   `json:"host_sum"`
	Devices   int       `json:"devices"`
	Processes int       `json:"processes"`
	Replica   string    `json:"replica"`
	Hosts     []struct {
		Rank   int               `json:"rank"`
		NodeID string            `json:"node_id"`
		Labels map[string]string `json:"labels"`
	} `json:"hosts"`
}

// application is the Serve application; dir holds the model module.
func application(cfg config, dir string) serve.Application {
	env := runtimeenv.RuntimeEnv{WorkingDir: dir}
	if cfg.JAXPlatforms != "" {
		env.EnvVars = map[string]string{"JAX_PLATFORMS": cfg.JAXPlatforms}
	}
	return serve.Application{
		Name: cfg.Name, RoutePrefix: "/" + cfg.Name, ImportPath: "linear:app",
		RuntimeEnv: env,
		Deployments: []serve.Deployment{{
			Name:        "Linear",
			NumReplicas: serveconfig.ReplicaCount(cfg.Replicas),
			UserConfig:  map[string]any{"w": 3.0, "b": 2.0},
			// The replica only orchestrates its slice's host workers; it
			// needs no CPU of a TPU host.
			RayActorOptions:   &serve.RayActorOptions{NumCPUs: new(0.0)},
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: cfg.Accelerator, Topology: cfg.Topology},
		}},
	}
}

// writeModel copies the embedded model into a fresh directory.
func writeModel() (string, error) {
	dir, err := os.MkdirTemp("", "raytpu-serve-")
	if err != nil {
		return "", err
	}
	b, err := fs.ReadFile(modelFS, "model/linear.py")
	if err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "linear.py"), b, 0o644)
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
		client, err := ray.NewClient(cfg.Address)
		if err != nil {
			return nil, err
		}
		b, err := raybackend.New(client)
		if err != nil {
			return nil, err
		}
		return b, nil
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

// run deploys the application, waits for it and, on a backend that runs
// it, queries it once over HTTP and once over gRPC. It returns the status
// and the model's answers (nil on the simulator).
func run(ctx context.Context, cfg config, out io.Writer) (*backend.ServiceStatus, *answers, error) {
	dir, err := writeModel()
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	b, err := newBackend(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.Backend == "ray" {
		if err := startServe(ctx, cfg, out); err != nil {
			return nil, nil, fmt.Errorf("starting Serve: %w", err)
		}
	}
	st, err := application(cfg, dir).Run(ctx, b, &backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) {
		fmt.Fprintf(out, "%s application %s: %s %s\n", time.Now().Format(time.TimeOnly), s.Name, s.State, firstLine(s.Message))
	}})
	if err != nil {
		return st, nil, err
	}
	for _, l := range st.Landings {
		fmt.Fprintf(out, "%s bundle %d -> %s (slice %s, %s)\n", l.Part, l.Bundle, l.Node, l.SliceName, l.State)
	}
	if !st.Ran {
		fmt.Fprintln(out, "simulator: the simulated cluster runs nothing and has no Serve endpoints; skipping the HTTP and gRPC queries")
		return st, nil, nil
	}
	a, err := query(ctx, cfg, out)
	if cfg.Delete {
		err = errors.Join(err, serve.Delete(ctx, b, cfg.Name))
	}
	return st, a, err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("--x: %q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Backend, "backend", cfg.Backend, "where to deploy: sim (the simulated TPU cluster; nothing runs), ray (a Ray cluster at --address) or kuberay (a RayService on Kubernetes)")
	flag.StringVar(&cfg.Address, "address", cfg.Address, "Ray dashboard URL, with --backend ray")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig, with --backend kuberay (default: $KUBECONFIG, ~/.kube/config)")
	flag.StringVar(&cfg.Namespace, "namespace", "", "namespace, with --backend kuberay (default: the kubeconfig context's)")
	flag.StringVar(&cfg.Proxy, "proxy", cfg.Proxy, "Serve's HTTP proxy URL, with --backend ray")
	flag.StringVar(&cfg.GRPC, "grpc", cfg.GRPC, "Serve's gRPC proxy host:port, with --backend ray")
	writePy := flag.String("write-python", "", "write raytpu's generated gRPC Python (for the nodes' PYTHONPATH) into this directory and exit")
	flag.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "simulated cluster spec, with --backend sim")
	flag.StringVar(&cfg.Name, "name", cfg.Name, "application name (and route prefix)")
	flag.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas, each on a v4 2x2x2 slice of its own")
	flag.StringVar(&cfg.JAXPlatforms, "jax-platforms", cfg.JAXPlatforms, `JAX_PLATFORMS for the replicas ("cpu" on hosts that pose as TPUs; "" on real TPUs)`)
	x := flag.String("x", "1,2,3", "inputs of the query, comma-separated")
	flag.BoolVar(&cfg.Delete, "delete", false, "delete the application after the query")
	flag.Parse()
	if *writePy != "" {
		if err := servev1.WritePython(*writePy); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s; put it on PYTHONPATH of every node before ray start\n", *writePy)
		return
	}
	var err error
	if cfg.X, err = parseFloats(*x); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, _, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	if !st.Ran {
		fmt.Printf("simulated: application %s is %s; nothing runs\n", st.Name, st.State)
		if d := st.Diagnosis.String(); d != "" {
			fmt.Println(d)
		}
	}
}
