// Command jobsbench drives the Go side of bench/jobsbench/vs-python.sh:
// it starts and stops a local Ray cluster, times job submissions, and times
// packaging plus upload of a working_dir, printing one JSON object per run.
//
//	jobsbench -start-cluster state.json     # prints the dashboard URL
//	jobsbench -address URL -submit 10
//	jobsbench -address URL -upload DIR
//	jobsbench -gen DIR -files 10000 -bytes 20000
//	jobsbench -stop-cluster state.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/testtree"
	"github.com/raytpu/raytpu/ray"
)

func main() {
	var (
		start   = flag.String("start-cluster", "", "start a head-only local cluster, write its state to this file, print its dashboard URL")
		stop    = flag.String("stop-cluster", "", "stop the cluster saved in this state file")
		address = flag.String("address", "", "dashboard URL")
		submit  = flag.Int("submit", 0, "time this many sequential job submissions")
		upload  = flag.String("upload", "", "time packaging and uploading this working_dir")
		gen     = flag.String("gen", "", "generate a tree of text-like files in this directory")
		files   = flag.Int("files", 10000, "files for -gen")
		size    = flag.Int("bytes", 20000, "bytes per file for -gen")
		store   = flag.Bool("store", false, "package without compression (as Ray's Python client does)")
	)
	flag.Parse()
	ctx := context.Background()
	var err error
	switch {
	case *start != "":
		err = startCluster(ctx, *start)
	case *stop != "":
		err = raycluster.StopState(*stop)
	case *gen != "":
		err = generate(*gen, *files, *size)
	case *submit > 0:
		err = benchSubmit(ctx, *address, *submit)
	case *upload != "":
		err = benchUpload(ctx, *address, *upload, *store)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobsbench:", err)
		os.Exit(1)
	}
}

func startCluster(ctx context.Context, state string) error {
	url, err := raycluster.StartDetached(ctx, raycluster.Config{HeadCPUs: 2}, state)
	if err != nil {
		return err
	}
	fmt.Println(url)
	return nil
}

// generate writes the benchmark's working_dir.
func generate(dir string, n, size int) error {
	_, err := testtree.Generate(dir, n, size, 7)
	return err
}

func stats(ds []time.Duration) map[string]float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return map[string]float64{"median_ms": ms(s[len(s)/2]), "mean_ms": ms(sum / time.Duration(len(s))), "min_ms": ms(s[0]), "max_ms": ms(s[len(s)-1])}
}

func benchSubmit(ctx context.Context, address string, n int) error {
	c, err := ray.NewClient(address)
	if err != nil {
		return err
	}
	if _, err := c.Version(ctx); err != nil { // warm the connection, as Python's constructor does
		return err
	}
	// One untimed job first: the first job of a cluster starts Ray's job
	// agent machinery.
	if id, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "echo warm"}); err != nil {
		return err
	} else if _, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 100 * time.Millisecond}); err != nil {
		return err
	}
	var rtt, toRunning []time.Duration
	for range n {
		t0 := time.Now()
		id, err := c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "echo hi"})
		if err != nil {
			return err
		}
		rtt = append(rtt, time.Since(t0))
		for {
			j, err := c.GetJob(ctx, id)
			if err != nil {
				return err
			}
			if j.Status != ray.JobPending {
				toRunning = append(toRunning, time.Since(t0))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := c.WaitJob(ctx, id, ray.WaitOptions{PollInterval: 100 * time.Millisecond}); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"side": "go", "submit": stats(rtt), "submit_to_running": stats(toRunning)})
}

func benchUpload(ctx context.Context, address, dir string, store bool) error {
	c, err := ray.NewClient(address)
	if err != nil {
		return err
	}
	if _, err := c.Version(ctx); err != nil {
		return err
	}
	opts := ray.PackageOptions{Store: store}
	out := map[string]any{"side": "go"}
	// The real path: hash, ask, zip streamed into the PUT.
	t0 := time.Now()
	uri, uploaded, err := c.UploadDir(ctx, dir, opts)
	out["seconds"] = time.Since(t0).Seconds()
	out["uri"], out["uploaded"] = uri, uploaded
	if err != nil {
		out["error"] = err.Error()
	}
	// For the record, outside the timing: the local steps alone.
	t1 := time.Now()
	if _, err := ray.HashDir(dir, opts); err == nil {
		out["hash_only_seconds"] = time.Since(t1).Seconds()
	}
	t2 := time.Now()
	if pkg, err := ray.PackageDir(dir, opts); err == nil {
		out["zip_only_seconds"] = time.Since(t2).Seconds()
		out["zip_bytes"], out["files"] = pkg.Size, pkg.Files
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
