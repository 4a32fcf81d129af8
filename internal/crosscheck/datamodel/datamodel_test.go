package datamodel_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	gocmp "cmp"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
)

// crossDevices is the JAX devices of every host in the cross-check
// (--xla_force_host_platform_device_count).
const crossDevices = 2

type splitCase struct {
	Rows    int    `json:"rows"`
	Workers int    `json:"workers"`
	Batch   int    `json:"batch"`
	Policy  string `json:"policy"`
	Sync    bool   `json:"sync"`
}

type syncCase struct {
	Shards   []int  `json:"shards"`
	Batch    int    `json:"batch"`
	Policy   string `json:"policy"`
	Prefetch int    `json:"prefetch,omitempty"`
}

// hostResult is one line of crosscheck_ray.py's output.
type hostResult struct {
	Case    int      `json:"case"`
	Host    int      `json:"host"`
	Batches [][2]int `json:"batches"`
	Outcome string   `json:"outcome"`
	Error   string   `json:"error"`
}

func policy(name string) data.RaggedPolicy {
	switch name {
	case "Drop":
		return data.Drop{}
	case "Pad":
		return data.Pad{Value: -1}
	}
	return data.Raise{}
}

// expand turns the model's runs into one [rows, pad] per batch, as the
// script prints them.
func expand(h data.HostBatches) hostResult {
	out := hostResult{Batches: [][2]int{}, Outcome: string(h.Outcome), Error: h.Error}
	for _, r := range h.Runs {
		for range r.Batches {
			out.Batches = append(out.Batches, [2]int{r.Rows, r.Pad})
		}
	}
	return out
}

func splitCases() []splitCase {
	var cases []splitCase
	policies := []string{"Raise", "Drop", "Pad"}
	batches := []int{4, 6, 8}
	i := 0
	for pass := range 2 {
		for _, rows := range []int{0, 3, 37, 100, 1001} {
			for _, w := range []int{1, 3, 4} {
				cases = append(cases, splitCase{Rows: rows, Workers: w, Batch: batches[(i+pass)%3], Policy: policies[(i/3+pass)%3], Sync: i%2 == 0})
				i++
			}
		}
	}
	return cases
}

func syncCases() []syncCase {
	return []syncCase{
		{Shards: []int{9, 17}, Batch: 4, Policy: "Drop"},
		{Shards: []int{9, 17}, Batch: 4, Policy: "Pad"},
		{Shards: []int{9, 17}, Batch: 4, Policy: "Raise"},
		{Shards: []int{5, 12}, Batch: 4, Policy: "Pad", Prefetch: 2},
		{Shards: []int{6, 8}, Batch: 4, Policy: "Raise"},
		{Shards: []int{4, 8}, Batch: 4, Policy: "Raise", Prefetch: 3},
		{Shards: []int{10, 10}, Batch: 4, Policy: "Raise"},
		{Shards: []int{9, 9}, Batch: 4, Policy: "Raise"},
		{Shards: []int{6, 7}, Batch: 4, Policy: "Raise"},
		{Shards: []int{0, 8}, Batch: 4, Policy: "Drop"},
		{Shards: []int{0, 8}, Batch: 4, Policy: "Raise"},
		{Shards: []int{0, 0}, Batch: 4, Policy: "Pad"},
		{Shards: []int{13, 13}, Batch: 6, Policy: "Pad", Prefetch: 2},
		{Shards: []int{20, 3}, Batch: 6, Policy: "Pad"},
	}
}

func runScript(t *testing.T, py string, args ...string) ([]hostResult, error) {
	var out []hostResult
	err := runScriptLines(t, py, func(line []byte) {
		var r hostResult
		if json.Unmarshal(line, &r) == nil {
			out = append(out, r)
		}
	}, args...)
	return out, err
}

// runScriptLines runs crosscheck_ray.py and hands every output line to
// line (Ray and JAX log lines included; line skips what is not JSON).
func runScriptLines(t *testing.T, py string, line func([]byte), args ...string) error {
	cmd := exec.CommandContext(t.Context(), py, append([]string{filepath.Join("testdata", "crosscheck_ray.py")}, args...)...)
	cmd.Env = append(os.Environ(), "JAX_PLATFORMS=cpu", "RAY_AUTH_MODE=disabled",
		"XLA_FLAGS=--xla_force_host_platform_device_count="+strconv.Itoa(crossDevices))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %v\n%s", py, args, err, tail(stderr.Bytes()))
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line(sc.Bytes())
	}
	return nil
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// TestCrossCheckRealRay runs a grid of iter_jax_batches cases on real Ray
// Data and JAX (CPU, 2 devices per host) and compares every host's batch
// shapes and outcome with the model's prediction: Ray Train's equal split
// in one process, and batch synchronisation over two JAX processes joined
// by jax.distributed.
func TestCrossCheckRealRay(t *testing.T) {
	py := venvtest.Python(t)
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	splits, syncs := splitCases(), syncCases()
	syncOut := make([][]hostResult, 2)
	var wg sync.WaitGroup
	splitFile, syncFile := write("split.json", splits), write("sync.json", syncs)
	port := strconv.Itoa(20000 + os.Getpid()%20000)
	splitOut, err := runScript(t, py, "split", splitFile)
	if err != nil {
		t.Fatal(err)
	}
	syncErr := make([]error, 2)
	for rank := range 2 {
		wg.Go(func() {
			syncOut[rank], syncErr[rank] = runScript(t, py, "sync", syncFile, strconv.Itoa(rank), "2", port)
		})
	}
	wg.Wait()
	for _, err := range syncErr {
		if err != nil {
			t.Fatal(err)
		}
	}

	agree, total, unordered := 0, 0, 0
	got := map[[2]int]hostResult{}
	for _, r := range splitOut {
		got[[2]int{r.Case, r.Host}] = r
	}
	for i, c := range splits {
		total++
		pr, _ := data.Predict(field.NewPath("iter"), data.From(data.Range{N: c.Rows}),
			data.IterJaxBatches{BatchSize: c.Batch, Ragged: policy(c.Policy), SynchronizeBatches: c.Sync, AllowRaise: true},
			data.Hosts{Workers: c.Workers, LocalDevices: crossDevices})
		if pr == nil || len(pr.Groups) != 1 {
			t.Errorf("split case %d %+v: no prediction", i, c)
			continue
		}
		want := expand(pr.Groups[0].Batches)
		ok := true
		for h := range c.Workers {
			g, found := got[[2]int{i, h}]
			if !found {
				t.Errorf("split case %d %+v host %d: no result from Ray", i, c, h)
				ok = false
				continue
			}
			g.Case, g.Host = 0, 0
			if diff := cmp.Diff(want, g); diff != "" {
				t.Errorf("split case %d %+v host %d (-model +ray):\n%s", i, c, h, diff)
				ok = false
			}
		}
		if ok {
			agree++
		}
	}
	for i, c := range syncs {
		total++
		model := data.ModelBatches(c.Shards, data.Batching{BatchSize: c.Batch, Devices: crossDevices, Policy: policy(c.Policy), Sync: true, Lookahead: max(c.Prefetch, 1)})
		ok := true
		for h := range c.Shards {
			var g *hostResult
			for j := range syncOut[h] {
				if syncOut[h][j].Case == i {
					g = &syncOut[h][j]
				}
			}
			if g == nil {
				t.Errorf("sync case %d %+v host %d: no result from Ray", i, c, h)
				ok = false
				continue
			}
			r := *g
			r.Case, r.Host = 0, 0
			want := expand(model[h])
			if c.Prefetch > 1 {
				// With prefetch_batches > 1 Ray formats batches in a thread
				// pool, and a host's short batch was seen to come before a
				// full one: compare the batches as a multiset.
				unordered++
				sortBatches(want.Batches)
				sortBatches(r.Batches)
			}
			if diff := cmp.Diff(want, r); diff != "" {
				t.Errorf("sync case %d %+v host %d (-model +ray):\n%s", i, c, h, diff)
				ok = false
			}
		}
		if ok {
			agree++
		}
	}
	t.Logf("%d/%d agree (%d split cases over up to 4 workers, %d synchronised cases over 2 JAX processes; %d host results with prefetch > 1 compared regardless of batch order)", agree, total, len(splits), len(syncs), unordered)
	fmt.Printf("%d/%d agree\n", agree, total)
	if total < 30 {
		t.Errorf("only %d cases; the grid must hold at least 30", total)
	}
}

func sortBatches(b [][2]int) {
	slices.SortFunc(b, func(x, y [2]int) int { return gocmp.Compare(x[0]*1000+x[1], y[0]*1000+y[1]) })
}
