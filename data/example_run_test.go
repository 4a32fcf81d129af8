package data_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/sim"
)

// Run executes a pipeline on a backend. On the simulated TPU cluster
// nothing is read or written, and the result says so; with a Ray backend
// (raybackend.New) the same call runs the job and returns what the
// launcher wrote.
func ExamplePipeline_Run() {
	spec, err := sim.ParseSpec("v4-16,cpu:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	cluster, err := sim.NewCluster(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := data.Pipeline{
		Name: "infer",
		Dataset: data.From(data.ReadParquet{Paths: []string{"gs://bucket/in"}}).
			MapBatches(data.MapBatches{
				Fn: "linear:Linear", BatchSize: 250, ActorPool: &data.ActorPool{Size: 2},
				Resources: map[string]float64{"TPU": 4, "CPU": 0}, Accelerator: "v4", KeepsRowCount: true,
			}).
			Write(data.WriteParquet{Path: "gs://bucket/out"}),
	}
	res, err := p.Run(context.Background(), cluster, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Backend, res.Simulated, res.JobID)
	// Output:
	// sim true infer
}

// ParquetRows counts the rows read_parquet will read from the files'
// footers; a read_parquet source over local files is counted the same way
// when a pipeline compiles, so Predict knows every host's batches.
func ExampleParquetRows() {
	dir, err := os.MkdirTemp("", "rows-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	type row struct {
		ID int64 `parquet:"id"`
	}
	for i, n := range []int{600, 403} {
		if err := parquet.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), make([]row, n)); err != nil {
			fmt.Println(err)
			return
		}
	}
	n, err := data.ParquetRows(dir)
	fmt.Println(n, err)
	_, err = data.ParquetRows("gs://bucket/train")
	fmt.Println(err)
	// Output:
	// 1003 <nil>
	// gs://bucket/train: a remote path: row count unknown before running
}
