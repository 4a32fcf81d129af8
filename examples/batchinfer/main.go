// Command batchinfer runs batch inference on TPUs with raytpu's data
// package: read_parquet over several files, map_batches with a tiny JAX
// model on an actor pool of TPU hosts (each actor holds the 4 chips of one
// v4 host), and write_parquet. The Go side writes the input files and,
// after the run, reads the output back and checks that every input row
// was written exactly once with the model's prediction.
//
// The same pipeline runs on any backend; only the --backend flag changes.
// By default it is placed on the simulated TPU cluster, which runs
// nothing and says so:
//
//	go run ./examples/batchinfer
//
// With --backend ray it runs for real as a Ray job through a cluster's
// dashboard, for example one started by `raytpu dev-cluster up --spec
// v4-16` (the input and output directories must be reachable from the
// cluster's nodes: a local cluster, or shared storage):
//
//	go run ./examples/batchinfer --backend ray --address http://127.0.0.1:8265
package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/sim"
)

//go:embed model/linear.py
var modelFS embed.FS

// The model: y = w*x + b.
const (
	modelW = 3.0
	modelB = 2.0
)

type config struct {
	Backend      string // "sim" or "ray"
	Address      string // Ray dashboard URL, with Backend "ray"
	Cluster      string // simulated cluster spec
	Name         string
	Rows         int // input rows, over Files files
	Files        int
	Actors       int    // actor pool size: one actor per TPU host
	BatchSize    int    // rows per model call
	Dir          string // holds input/ and output/; "" for a fresh temp dir
	Input        string // existing input files (ids 0..Rows-1, x = id) instead of Dir/input
	JAXPlatforms string // JAX_PLATFORMS of the job ("" leaves it unset)
	// MarkerDir and Delay are fault-injection hooks: every actor writes
	// actor-<pid>.pid and actor-<pid>.calls there, and sleeps Delay after
	// each call.
	MarkerDir string
	Delay     time.Duration
	// MaxRestarts of the model actors; nil for the default (unbounded).
	MaxRestarts *int
	Logs        io.Writer     // receives the job's driver log, if set
	Poll        time.Duration // how often the job's status is read; 0 for the backend's default
}

func defaults() config {
	return config{
		Backend: "sim", Address: "http://127.0.0.1:8265", Cluster: "v4-16,cpu:1", Name: "batchinfer",
		Rows: 10_000, Files: 4, Actors: 2, BatchSize: 250, JAXPlatforms: "cpu",
	}
}

// pipeline is the batch-inference pipeline; modelDir holds the model module.
func pipeline(cfg config, modelDir, in, out string) data.Pipeline {
	ctor := map[string]any{"w": modelW, "b": modelB}
	if cfg.MarkerDir != "" {
		ctor["marker_dir"] = cfg.MarkerDir
	}
	if cfg.Delay > 0 {
		ctor["delay_s"] = cfg.Delay.Seconds()
	}
	env := runtimeenv.RuntimeEnv{WorkingDir: modelDir}
	if cfg.JAXPlatforms != "" {
		env.EnvVars = map[string]string{"JAX_PLATFORMS": cfg.JAXPlatforms}
	}
	return data.Pipeline{
		Name: cfg.Name,
		// Ray 2.60 reads small files in one task, as one block, whatever
		// override_num_blocks says; blocks of 1,000 rows give every actor
		// work.
		Dataset: data.From(data.ReadParquet{Paths: []string{in}}).
			Repartition(data.Repartition{TargetNumRowsPerBlock: 1000}).
			MapBatches(data.MapBatches{
				Fn:                  "linear:Linear",
				FnConstructorKwargs: ctor,
				BatchSize:           cfg.BatchSize,
				BatchFormat:         "numpy",
				ActorPool:           &data.ActorPool{Size: cfg.Actors},
				// Every actor holds the 4 chips of one v4 host, and no
				// CPU, so that the read and write tasks keep theirs.
				Resources:     map[string]float64{"TPU": 4, "CPU": 0},
				Accelerator:   "v4",
				KeepsRowCount: true,
				MaxRestarts:   cfg.MaxRestarts,
			}).
			Write(data.WriteParquet{Path: out}),
		RuntimeEnv: env,
	}
}

// writeModel copies the embedded model into a fresh directory.
func writeModel() (string, error) {
	dir, err := os.MkdirTemp("", "raytpu-batchinfer-")
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
		var opts []raybackend.Option
		if cfg.Poll != 0 {
			opts = append(opts, raybackend.WithPollInterval(cfg.Poll))
		}
		b, err := raybackend.New(client, opts...)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, fmt.Errorf("--backend %q: want sim or ray", cfg.Backend)
}

// report is what one run did.
type report struct {
	Result *data.Result
	// Written is the rows read back; PerActor the rows each actor process
	// (by pid) predicted.
	Written  int
	PerActor map[int64]int
	// Start is when the run was handed to the backend; Elapsed how long
	// it took to its end (the output check is not counted).
	Start   time.Time
	Elapsed time.Duration
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// run writes the input, runs the pipeline on the chosen backend and, when
// it ran, verifies the output: a *OutputError (errors.Is ErrOutput) when a
// row is missing, duplicated or wrong.
func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "raytpu-batchinfer-data-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	in, outDir := filepath.Join(dir, "input"), filepath.Join(dir, "output")
	if cfg.Input != "" {
		in = cfg.Input
	} else if err := writeInput(in, cfg.Rows, cfg.Files); err != nil {
		return nil, err
	}
	modelDir, err := writeModel()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(modelDir)
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := pipeline(cfg, modelDir, in, outDir).Run(ctx, b, &backend.RunOptions{
		OnStatus: func(s backend.Status) {
			fmt.Fprintf(out, "%s job %s: %s %s\n", time.Now().Format(time.TimeOnly), s.ID, s.State, s.Message)
		},
		Logs: cfg.Logs,
	})
	rep := &report{Result: res, Start: start, Elapsed: time.Since(start)}
	if err != nil || res.Simulated {
		return rep, err
	}
	rows, err := readOutput(outDir)
	if err != nil {
		return rep, err
	}
	rep.Written = len(rows)
	rep.PerActor, err = verify(rows, cfg.Rows, modelW, modelB)
	return rep, err
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Backend, "backend", cfg.Backend, "where to run: sim (the simulated TPU cluster; nothing runs) or ray (a Ray cluster at --address)")
	flag.StringVar(&cfg.Address, "address", cfg.Address, "Ray dashboard URL, with --backend ray")
	flag.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "simulated cluster spec")
	flag.StringVar(&cfg.Name, "name", cfg.Name, "job name")
	flag.IntVar(&cfg.Rows, "rows", cfg.Rows, "input rows")
	flag.IntVar(&cfg.Files, "files", cfg.Files, "input Parquet files")
	flag.IntVar(&cfg.Actors, "actors", cfg.Actors, "model actors, one per v4 host (4 chips each)")
	flag.IntVar(&cfg.BatchSize, "batch-size", cfg.BatchSize, "rows per model call")
	flag.StringVar(&cfg.Dir, "dir", "", "directory for input/ and output/ (default: a temp dir, removed after the run)")
	flag.StringVar(&cfg.Input, "input", "", "read these Parquet files (columns id 0..rows-1 and x = id) instead of writing --files new ones")
	flag.StringVar(&cfg.JAXPlatforms, "jax-platforms", cfg.JAXPlatforms, `JAX_PLATFORMS of the job ("" on real TPU hosts)`)
	flag.DurationVar(&cfg.Poll, "poll", 0, "with --backend ray: how often the job's status is read (default 1s)")
	logs := flag.Bool("logs", false, "stream the job's driver log")
	asJSON := flag.Bool("json", false, "print one JSON line: rows, seconds, rows_per_s")
	flag.Parse()
	if *logs {
		cfg.Logs = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	status := io.Writer(os.Stdout)
	if *asJSON {
		status = os.Stderr // stdout holds the one JSON line
	}
	rep, err := run(ctx, cfg, status)
	if err != nil {
		fmt.Fprintln(os.Stderr, "batchinfer:", err)
		os.Exit(1)
	}
	if rep.Result.Simulated {
		fmt.Printf("simulated: nothing ran; %d rows over %d files would be predicted by %d actors of 4 TPU chips each\n", cfg.Rows, cfg.Files, cfg.Actors)
		return
	}
	if *asJSON {
		// t0 and t1 (Unix seconds) bound the timed span, for a timeline
		// of the job beside Ray's own logs.
		fmt.Printf("{\"side\": \"raytpu\", \"rows\": %d, \"seconds\": %.3f, \"rows_per_s\": %.1f, \"job_id\": %q, \"t0\": %.3f, \"t1\": %.3f}\n",
			rep.Written, rep.Elapsed.Seconds(), float64(rep.Written)/rep.Elapsed.Seconds(), rep.Result.JobID,
			unixSeconds(rep.Start), unixSeconds(rep.Start.Add(rep.Elapsed)))
		return
	}
	fmt.Printf("done: %d rows written exactly once with y = %g*x + %g in %s (%.0f rows/s)\n",
		rep.Written, modelW, modelB, rep.Elapsed.Round(time.Millisecond), float64(rep.Written)/rep.Elapsed.Seconds())
	for _, pid := range slices.Sorted(maps.Keys(rep.PerActor)) {
		fmt.Printf("  actor pid %d: %d rows\n", pid, rep.PerActor[pid])
	}
}
