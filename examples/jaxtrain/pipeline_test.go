package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
)

// etlModule holds the map_batches callables the pipeline names: a function
// (run as tasks) and a class (run on an actor pool).
const etlModule = `
def add_one(batch):
    batch["id"] = batch["id"] + 1
    return batch


class Doubler:
    def __call__(self, batch):
        batch["id"] = batch["id"] * 2
        return batch
`

// The launcher's "data" entry on the local cluster: a compiled
// data.Pipeline is rebuilt with ray.data calls (a "module:attr" function,
// a class on an ActorPoolStrategy) and written with write_json.
func TestPipelineRunsOnRay(t *testing.T) {
	work, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(filepath.Join(work, "etl.py"), []byte(etlModule), 0o644); err != nil {
		t.Fatal(err)
	}
	const rows = 100
	p := data.Pipeline{
		Name: "etl",
		Dataset: data.From(data.Range{N: rows, OverrideNumBlocks: 2}).
			MapBatches(data.MapBatches{Fn: "etl:add_one", BatchSize: 25, KeepsRowCount: true}).
			MapBatches(data.MapBatches{Fn: "etl:Doubler", BatchSize: 25, ActorPool: &data.ActorPool{Size: 1}, KeepsRowCount: true}).
			Write(data.WriteJSON{Path: out}),
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work},
	}
	plan, err := p.Compile()
	if err != nil {
		t.Fatal(err)
	}
	client, err := ray.NewClient(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	b, err := raybackend.New(client)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(t.Context(), plan, backend.RunOptions{Logs: logs})
	if err != nil || !res.Succeeded() {
		t.Fatalf("run: %v (outcome %+v)\n%s", err, res, logs.String())
	}
	var result struct {
		Kind, Name, Sink, Path string
		Files                  []string
	}
	if err := json.Unmarshal(res.Output, &result); err != nil {
		t.Fatalf("launcher result %s: %v", res.Output, err)
	}
	if result.Kind != "Pipeline" || result.Name != "etl" || result.Sink != "write_json" || result.Path != out || len(result.Files) == 0 {
		t.Errorf("launcher result %+v, want the pipeline's write_json to %s with its files", result, out)
	}
	var got []int
	for _, f := range result.Files {
		fh, err := os.Open(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var row struct{ ID int }
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			got = append(got, row.ID)
		}
		fh.Close()
	}
	slices.Sort(got)
	want := make([]int, rows)
	for i := range want {
		want[i] = 2 * (i + 1)
	}
	if !slices.Equal(got, want) {
		t.Errorf("written ids %v, want 2*(id+1) for ids 0..%d", got, rows-1)
	}
}
