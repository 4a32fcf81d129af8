// Command jaxtrain trains a tiny JAX model with raytpu's JaxTrainer: one
// worker per TPU host of a v4 2x2x2 slice (or several slices), with
// checkpoints and restarts.
//
// The same trainer runs on any backend; only the --backend flag changes.
// By default it is fitted on the simulated TPU cluster, which places one
// worker per host and prints where each would run (nothing trains):
//
//	go run ./examples/jaxtrain
//
// With --backend ray it trains for real on a Ray cluster through its
// dashboard (for example one started by `raytpu dev-cluster up`):
//
//	go run ./examples/jaxtrain --backend ray --address http://127.0.0.1:8265 --storage /tmp/raytpu-results
//
// With --backend kuberay it runs as a KubeRay RayJob in the cluster of the
// kubeconfig (the loop's directory travels in a ConfigMap):
//
//	go run ./examples/jaxtrain --backend kuberay --namespace ml --storage gs://bucket/results
//
// With --rows the workers iterate a Ray Data range dataset instead, each
// its shard, with iter_jax_batches options compiled in Go (--batch-size,
// --ragged); the trainer prints data.Predict's warnings before launch and
// refuses a --ragged raise certain to fail:
//
//	go run ./examples/jaxtrain --backend ray --rows 1000 --ragged pad --report-dir /tmp/batches
package main

import (
	"context"
	"embed"
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
	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

//go:embed loop/train_loop.py
var loopFS embed.FS

type config struct {
	Backend     string // "sim", "ray" or "kuberay"
	Address     string // Ray dashboard URL, with Backend "ray"
	Kubeconfig  string // kubeconfig path, with Backend "kuberay" (default: kubectl's rules)
	Namespace   string // namespace, with Backend "kuberay" (default: the context's)
	Cluster     string // simulated cluster spec
	Name        string
	Storage     string
	ReportDir   string
	Steps       int
	NumSlices   int
	MaxFailures int
	NumToKeep   int
	PauseAt     []int                   // fault-injection hook of the train loop (tests): steps at which rank 1 pauses, once each
	Adjust      func(*train.JaxTrainer) // tests change the trainer here before it runs
	Logs        io.Writer               // receives the job's driver log, if set
	Accelerator string
	Topology    string

	// Rows > 0 iterates range datasets of that many rows instead of
	// training: one dataset per policy in Ragged, named by the policy in
	// lower case ("drop", "pad", "raise"). The loop iterates one epoch of
	// its shard of each with iter_jax_batches (BatchSize rows per host) and
	// reports what it saw.
	Rows       int
	BatchSize  int
	Ragged     []data.RaggedPolicy
	AllowRaise bool
}

// padValue pads short batches of the range dataset, whose ids are never
// negative.
const padValue = -1

// hostDevices is the JAX devices of one v4 host (4 chips, one device
// each); the CPU workers pose as such hosts.
const hostDevices = 4

func defaults() config {
	return config{
		Backend: "sim", Address: "http://127.0.0.1:8265", Cluster: "2*v4-16,cpu:1", Name: "jaxtrain", Steps: 20, NumSlices: 1, NumToKeep: 2,
		Accelerator: "v4", Topology: "2x2x2",
	}
}

// trainer builds the JaxTrainer; workDir holds the train loop module.
func trainer(cfg config, workDir string) train.JaxTrainer {
	loopCfg := map[string]any{"steps": cfg.Steps, "checkpoint_every": 5, "lr": 0.3}
	if cfg.ReportDir != "" {
		loopCfg["report_dir"] = cfg.ReportDir
	}
	if len(cfg.PauseAt) > 0 {
		loopCfg["pause_at_step"] = cfg.PauseAt
	}
	t := train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		TrainLoopConfig:    loopCfg,
		ScalingConfig: train.ScalingConfig{
			UseTPU:      true,
			Accelerator: cfg.Accelerator,
			Topology:    cfg.Topology,
			NumSlices:   cfg.NumSlices,
		},
		RunConfig: train.RunConfig{
			Name:        cfg.Name,
			StoragePath: cfg.Storage,
			Checkpoint:  train.CheckpointConfig{NumToKeep: cfg.NumToKeep},
			Failure:     train.FailureConfig{MaxFailures: cfg.MaxFailures},
			// The example runs on CPUs posing as TPU hosts.
			WorkerEnv: map[string]string{"JAX_PLATFORMS": "cpu"},
		},
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: workDir},
	}
	if cfg.Rows > 0 {
		loopCfg["pad_value"] = padValue
		t.TrainLoopPerWorker = "train_loop:data_func"
		t.Datasets = datasets(cfg)
		// jax.local_device_count() of a v4 host, so that iter_jax_batches
		// shards every batch as it would on the TPU.
		t.RunConfig.WorkerEnv["XLA_FLAGS"] = fmt.Sprintf("--xla_force_host_platform_device_count=%d", hostDevices)
	}
	if cfg.Adjust != nil {
		cfg.Adjust(&t)
	}
	return t
}

// datasets is the data side of the trainer when cfg.Rows > 0: a range
// dataset per ragged policy, each split over the workers.
func datasets(cfg config) data.DatasetConfig {
	var c data.DatasetConfig
	for _, r := range cfg.Ragged {
		c.Datasets = append(c.Datasets, data.TrainDataset{
			Name:    datasetName(r),
			Dataset: data.From(data.Range{N: cfg.Rows}),
			Iter:    data.IterJaxBatches{BatchSize: cfg.BatchSize, Ragged: r, AllowRaise: cfg.AllowRaise},
		})
	}
	return c
}

// datasetName names the dataset of a ragged policy: "drop", "pad", "raise".
func datasetName(r data.RaggedPolicy) string { return strings.ToLower(data.Describe(r)) }

// writeLoop copies the embedded train loop into a fresh directory.
func writeLoop() (string, error) {
	dir, err := os.MkdirTemp("", "jaxtrain-")
	if err != nil {
		return "", err
	}
	b, err := fs.ReadFile(loopFS, "loop/train_loop.py")
	if err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "train_loop.py"), b, 0o644)
}

// newBackend is the only place the program chooses where it runs: the
// simulated TPU cluster (the default) or a Ray cluster's dashboard.
func newBackend(cfg config) (backend.Runner, error) {
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

// run fits the trainer on the chosen backend.
func run(ctx context.Context, cfg config, out io.Writer) (*train.Result, error) {
	dir, err := writeLoop()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	res, err := trainer(cfg, dir).Fit(ctx, b, &backend.RunOptions{
		OnStatus: func(s backend.Status) {
			fmt.Fprintf(out, "%s job %s: %s %s\n", time.Now().Format(time.TimeOnly), s.ID, s.State, s.Message)
		},
		Logs: cfg.Logs,
	})
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintln(out, "warning:", w)
		}
	}
	return res, err
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Backend, "backend", cfg.Backend, "where to run: sim (the simulated TPU cluster; nothing trains), ray (a Ray cluster at --address) or kuberay (a RayJob on Kubernetes)")
	flag.StringVar(&cfg.Address, "address", cfg.Address, "Ray dashboard URL, with --backend ray")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig, with --backend kuberay (default: $KUBECONFIG, ~/.kube/config)")
	flag.StringVar(&cfg.Namespace, "namespace", "", "namespace, with --backend kuberay (default: the kubeconfig context's)")
	flag.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "simulated cluster spec")
	flag.StringVar(&cfg.Name, "name", cfg.Name, "run name")
	flag.StringVar(&cfg.Storage, "storage", "", "storage path for results and checkpoints")
	flag.IntVar(&cfg.Steps, "steps", cfg.Steps, "training steps")
	flag.IntVar(&cfg.NumSlices, "num-slices", cfg.NumSlices, "number of v4 2x2x2 slices")
	flag.IntVar(&cfg.MaxFailures, "max-failures", 0, "restarts from the latest checkpoint")
	flag.Func("pause-at", "fault-injection demo: steps (comma-separated) at which rank 1 writes its pid to <report-dir>/paused-rank-1-step-N.pid and waits to be killed, once each", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n <= 0 {
				return fmt.Errorf("step %q: want a positive step number", s)
			}
			cfg.PauseAt = append(cfg.PauseAt, n)
		}
		return nil
	})
	flag.StringVar(&cfg.ReportDir, "report-dir", "", "directory for per-worker JSON reports (rank, node labels, MEGASCALE_* env)")
	flag.IntVar(&cfg.Rows, "rows", 0, "iterate one epoch of a range dataset of this many rows instead of training (0: train)")
	flag.IntVar(&cfg.BatchSize, "batch-size", 64, "with --rows: iter_jax_batches rows per host (a multiple of a v4 host's 4 devices)")
	ragged := flag.String("ragged", "pad", "with --rows: the last short batch: drop, pad (with -1) or raise, or several (drop,pad), one dataset each")
	flag.BoolVar(&cfg.AllowRaise, "allow-raise", false, "with --rows and --ragged raise: run even when the epoch is certain to fail")
	logs := flag.Bool("logs", false, "stream the job's driver log")
	flag.Parse()
	for _, name := range strings.Split(*ragged, ",") {
		switch name {
		case "drop":
			cfg.Ragged = append(cfg.Ragged, data.Drop{})
		case "pad":
			cfg.Ragged = append(cfg.Ragged, data.Pad{Value: padValue})
		case "raise":
			cfg.Ragged = append(cfg.Ragged, data.Raise{})
		default:
			fmt.Fprintf(os.Stderr, "jaxtrain: --ragged %q: want drop, pad or raise, or a comma-separated list\n", name)
			os.Exit(2)
		}
	}
	if *logs {
		cfg.Logs = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jaxtrain:", err)
		os.Exit(1)
	}
	if res.Simulated {
		fmt.Print(res)
		return
	}
	if cfg.Rows > 0 {
		fmt.Printf("done: epoch of %d rows iterated; per-host batches in --report-dir\n", cfg.Rows)
		return
	}
	step, _ := res.Step("step")
	fmt.Printf("done: step %d loss %v checkpoint %s\n", step, res.Metrics["loss"], res.Checkpoint)
	if rec := res.Recovery(); rec != nil {
		fmt.Println("recovery:", rec)
	}
}
