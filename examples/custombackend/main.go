// Command custombackend is a backend a platform team might write, run on
// the embedded default: Journal runs every plan on another backend (here
// the simulated TPU cluster) and records the plan and its outcome, one
// JSON file per run, for audit and for replay on another cluster.
//
//	go run ./examples/custombackend
//	go run ./examples/custombackend --dir /tmp/journal --cluster '2*v4-16,cpu:1'
//
// It fits a JaxTrainer through the journal, retries the same run (the
// journal answers from its record: nothing runs twice), tries another plan
// under the same id (backend.ErrAlreadyExists), deploys a Serve
// application through it, and replays the journal on a fresh cluster.
//
// Journal keeps the backend contract, and its test proves it with the
// conformance suite, backend/backendtest, as sim, raybackend and kuberay
// do: a backend of your own is written against package backend alone,
// checks each plan with backend.CheckPlan first, and returns errors that
// match the contract's neutral sentinels.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/train"
)

type config struct {
	Dir     string // the journal's directory; empty: a new temporary one
	Cluster string // the simulated cluster's spec
}

func main() {
	var cfg config
	flag.StringVar(&cfg.Dir, "dir", "", "the journal's directory (default: a new temporary directory)")
	flag.StringVar(&cfg.Cluster, "cluster", "2*v4-16,cpu:1", "the simulated TPU cluster (sim.ParseSpec)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "custombackend:", err)
		os.Exit(1)
	}
}

// trainer is a two-slice v4 2x2x2 JaxTrainer named name.
func trainer(name string) train.JaxTrainer {
	return train.JaxTrainer{
		TrainLoopPerWorker: "train_loop:train_func",
		ScalingConfig:      train.ScalingConfig{UseTPU: true, Accelerator: "v4", Topology: "2x2x2", NumSlices: 2},
		RunConfig:          train.RunConfig{Name: name},
	}
}

func newCluster(spec string) (*sim.Cluster, error) {
	s, err := sim.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return sim.NewCluster(s)
}

func run(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "raytpu-journal-")
		if err != nil {
			return err
		}
		cfg.Dir = dir
	}
	cluster, err := newCluster(cfg.Cluster)
	if err != nil {
		return err
	}
	j, err := Open(cfg.Dir, cluster)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "journal in %s over the simulated cluster %s\n", cfg.Dir, cfg.Cluster)

	opts := backend.RunOptions{SubmissionID: "nightly-1"}
	res, err := trainer("nightly").Fit(ctx, j, &opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fit %s on %s: simulated %v, %d workers placed\n", res.JobID, res.Backend, res.Simulated, len(res.Workers))
	if _, err := trainer("nightly").Fit(ctx, j, &opts); err != nil {
		return err
	}
	fmt.Fprintf(w, "retried %s: answered from the journal, which holds %d run(s)\n", opts.SubmissionID, len(j.Runs()))
	_, err = trainer("weekly").Fit(ctx, j, &opts)
	if !errors.Is(err, backend.ErrAlreadyExists) {
		return fmt.Errorf("another plan under %s: %v, want backend.ErrAlreadyExists", opts.SubmissionID, err)
	}
	fmt.Fprintf(w, "another plan under %s: %v\n", opts.SubmissionID, err)

	app := serve.Application{Name: "chat", ImportPath: "chat:app", Deployments: []serve.Deployment{{
		Name: "LLM", NumReplicas: serveconfig.ReplicaCount(1), AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
	}}}
	st, err := app.Run(ctx, j, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "deployed %s on %s: %s, %d bundles placed\n", st.Name, st.Backend, st.State, len(st.Landings))

	fresh, err := newCluster(cfg.Cluster)
	if err != nil {
		return err
	}
	outs, err := j.Replay(ctx, fresh, "-replay")
	if err != nil {
		return err
	}
	for _, out := range outs {
		fmt.Fprintf(w, "replayed %s on a fresh %s cluster: %s, %d bundles placed\n", out.ID, out.Backend, out.State, len(out.Landings))
	}
	return nil
}
