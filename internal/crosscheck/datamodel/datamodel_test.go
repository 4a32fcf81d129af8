package datamodel_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	gocmp "cmp"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/batchmodel"
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

// modelPolicy is policy's name for the model.
func modelPolicy(name string) batchmodel.Policy {
	switch name {
	case "Drop":
		return batchmodel.Drop
	case "Pad":
		return batchmodel.Pad
	}
	return batchmodel.Raise
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

// expandModel is expand for the model's own account of a host.
func expandModel(h batchmodel.HostBatches) hostResult {
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

// runScript sends mode's cases (and extra's keys) to the package's
// crosscheck_ray.py process and returns its result lines.
func runScript(t *testing.T, py, mode string, cases any, extra map[string]any) ([]hostResult, error) {
	var out []hostResult
	err := crossRay.request(t, py, mode, cases, extra, func(line []byte) {
		var r hostResult
		if json.Unmarshal(line, &r) == nil {
			out = append(out, r)
		}
	})
	return out, err
}

// TestCrossCheckRealRay runs a grid of iter_jax_batches cases on real Ray
// Data and JAX (CPU, 2 devices per host) and compares every host's batch
// shapes and outcome with the model's prediction: Ray Train's equal split
// in one process, and batch synchronisation over two JAX processes joined
// by jax.distributed (two Ray workers, as the hosts of a slice are in Ray
// Train).
func TestCrossCheckRealRay(t *testing.T) {
	py := venvtest.Python(t)
	splits, syncs := splitCases(), syncCases()
	splitOut, err := runScript(t, py, "split", splits, nil)
	if err != nil {
		t.Fatal(err)
	}
	syncLines, err := runScript(t, py, "sync", syncs, map[string]any{"world": 2, "devices": crossDevices})
	if err != nil {
		t.Fatal(err)
	}
	syncOut := make([][]hostResult, 2)
	for _, r := range syncLines {
		if r.Host < 0 || r.Host >= len(syncOut) {
			t.Fatalf("a sync result of host %d; there are %d hosts", r.Host, len(syncOut))
		}
		syncOut[r.Host] = append(syncOut[r.Host], r)
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
		model := batchmodel.Epochs(c.Shards, batchmodel.Batching{BatchSize: c.Batch, Devices: crossDevices, Policy: modelPolicy(c.Policy), Sync: true, Lookahead: max(c.Prefetch, 1)})
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
			want := expandModel(model[h])
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
