package sim_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

type sel = map[string]string

func TestStrategies(t *testing.T) {
	t.Parallel()
	cpu := func(n float64) map[string]float64 { return map[string]float64{"CPU": n} }
	tests := []struct {
		name     string
		spec     string
		before   []sim.PlacementGroupRequest // created first, must be CREATED
		req      sim.PlacementGroupRequest
		want     []string
		state    sim.State
		reasonIn string
	}{
		{name: "PACK fills a node before the next", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Pack, Bundles: repeat(3, cpu(2))},
			want: []string{"cpu-0", "cpu-0", "cpu-1"}, state: sim.StateCreated},
		{name: "PACK is the default", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Bundles: repeat(3, cpu(2))},
			want: []string{"cpu-0", "cpu-0", "cpu-1"}, state: sim.StateCreated},
		{name: "PACK starts on the emptiest node (LeastResourceScorer)", spec: "cpu:3{cpu=4}",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, cpu(3))}},
			req:    sim.PlacementGroupRequest{Strategy: placement.Pack, Bundles: repeat(2, cpu(1))},
			want:   []string{"cpu-1", "cpu-1"}, state: sim.StateCreated},
		{name: "SPREAD uses distinct nodes", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(3, cpu(2))},
			want: []string{"cpu-0", "cpu-1", "cpu-2"}, state: sim.StateCreated},
		{name: "SPREAD reuses its nodes when it runs out", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(4, cpu(2))},
			want: []string{"cpu-0", "cpu-1", "cpu-2", "cpu-0"}, state: sim.StateCreated},
		{name: "bigger bundles first", spec: "cpu:2{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: []map[string]float64{cpu(1), cpu(3)}},
			want: []string{"cpu-1", "cpu-0"}, state: sim.StateCreated},
		{name: "custom resources before CPU", spec: "v6e-8,cpu:1{cpu=16}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: []map[string]float64{cpu(8), {"TPU": 1}}},
			want: []string{"cpu-0", "v6e-8-0-w0"}, state: sim.StateCreated},
		{name: "STRICT_PACK on one node", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.StrictPack, Bundles: repeat(2, cpu(2))},
			want: []string{"cpu-0", "cpu-0"}, state: sim.StateCreated},
		{name: "STRICT_PACK too big for any node", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.StrictPack, Bundles: repeat(3, cpu(2))},
			want: []string{"", "", ""}, state: sim.StateInfeasible, reasonIn: "STRICT_PACK: no node can hold all 3 bundles together {CPU: 6}"},
		{name: "STRICT_PACK waits for a free node", spec: "cpu:2{cpu=4}",
			before: []sim.PlacementGroupRequest{{Strategy: placement.Spread, Bundles: repeat(2, cpu(1))}},
			req:    sim.PlacementGroupRequest{Strategy: placement.StrictPack, Bundles: repeat(2, cpu(2))},
			want:   []string{"", ""}, state: sim.StatePending, reasonIn: "STRICT_PACK: none of the 2 nodes"},
		{name: "STRICT_SPREAD one node each", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: repeat(3, cpu(1))},
			want: []string{"cpu-0", "cpu-1", "cpu-2"}, state: sim.StateCreated},
		{name: "STRICT_SPREAD more bundles than nodes", spec: "cpu:3{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: repeat(4, cpu(1))},
			want: []string{"", "", "", ""}, state: sim.StateInfeasible, reasonIn: "the cluster has 3 nodes"},
		{name: "SPREAD beyond the cluster stays PENDING as in Ray", spec: "cpu:2{cpu=4}",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(3, cpu(4))},
			want: []string{"", "", ""}, state: sim.StatePending, reasonIn: "Ray keeps the group PENDING"},
		{name: "STRICT_SPREAD on too few big nodes stays PENDING as in Ray", spec: "cpu:1{cpu=8},cpu:2{cpu=1}",
			req:  sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: repeat(3, cpu(4))},
			want: []string{"", "", ""}, state: sim.StatePending, reasonIn: "Ray keeps the group PENDING"},
		{name: "STRICT_SPREAD waits for its nodes", spec: "cpu:3{cpu=4}",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, cpu(4))}},
			req:    sim.PlacementGroupRequest{Strategy: placement.StrictSpread, Bundles: repeat(3, cpu(1))},
			want:   []string{"", "", ""}, state: sim.StatePending, reasonIn: "on a node of its own (STRICT_SPREAD)"},
		{name: "fractional resources", spec: "cpu:1{cpu=1}",
			req:  sim.PlacementGroupRequest{Bundles: repeat(4, cpu(0.25))},
			want: []string{"cpu-0", "cpu-0", "cpu-0", "cpu-0"}, state: sim.StateCreated},
		{name: "bundle larger than any node", spec: "v6e-16",
			req:  sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"TPU": 8})},
			want: []string{""}, state: sim.StateInfeasible, reasonIn: "no node that matches has that much of every resource"},
		{name: "resource nobody has", spec: "v6e-16",
			req:  sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"TPU-v6e-32-head": 1})},
			want: []string{""}, state: sim.StateInfeasible, reasonIn: "no node has resource TPU-v6e-32-head"},
		{name: "slice resource pins the slice", spec: "2*v6e-16",
			req:  sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(2, map[string]float64{"TPU": 4, "v6e-16-1": 1})},
			want: []string{"v6e-16-1-w0", "v6e-16-1-w1"}, state: sim.StateCreated},
		{name: "head resource finds worker 0", spec: "2*v6e-16",
			before: []sim.PlacementGroupRequest{{Bundles: repeat(1, map[string]float64{"TPU-v6e-16-head": 1})}},
			req:    sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"TPU-v6e-16-head": 1})},
			want:   []string{"v6e-16-1-w0"}, state: sim.StateCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, tt.spec)
			for _, b := range tt.before {
				pg, err := c.CreatePlacementGroup(b)
				if err != nil || pg.State != sim.StateCreated {
					t.Fatalf("setup group: %v %+v", err, pg)
				}
			}
			pg, err := c.CreatePlacementGroup(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, nodesOf(pg)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if pg.State != tt.state {
				t.Errorf("state = %s, want %s (%s)", pg.State, tt.state, pg.Reason)
			}
			if !strings.Contains(pg.Reason, tt.reasonIn) || (tt.reasonIn == "") != (pg.Reason == "") {
				t.Errorf("reason = %q, want it to contain %q", pg.Reason, tt.reasonIn)
			}
		})
	}
}

func TestLabelSelectors(t *testing.T) {
	t.Parallel()
	tpu := func(n float64) map[string]float64 { return map[string]float64{"TPU": n} }
	tests := []struct {
		name     string
		bundle   map[string]float64
		selector sel
		want     string
		state    sim.State
	}{
		{"no selector: emptiest host first", tpu(1), nil, "v6e-8-0-w0", sim.StateCreated},
		{"equality", tpu(4), sel{rayvocab.LabelAcceleratorType: "TPU-V4"}, "v4-16-0-w0", sim.StateCreated},
		{"in()", tpu(1), sel{rayvocab.LabelTPUPodType: "in(v4-16,v6e-16)"}, "v6e-16-0-w0", sim.StateCreated},
		// Ray 2.60's raylet keeps the space it accepts after a comma: the
		// item " v6e-16" matches no node, so only the v4-16 hosts qualify.
		{"in() keeps the space after a comma", tpu(1), sel{rayvocab.LabelTPUPodType: "in(v4-16, v6e-16)"}, "v4-16-0-w0", sim.StateCreated},
		{"negated in() keeps the space", tpu(1), sel{rayvocab.LabelTPUPodType: "!in(v6e-8, v6e-16)"}, "v6e-16-0-w0", sim.StateCreated},
		// Parentheses without "in" are one literal value no node holds.
		{"parentheses without in", tpu(1), sel{rayvocab.LabelTPUPodType: "(v6e-16)"}, "", sim.StateInfeasible},
		{"negated parentheses without in", tpu(1), sel{rayvocab.LabelTPUPodType: "!(v6e-16)"}, "v6e-8-0-w0", sim.StateCreated},
		{"negation", tpu(1), sel{rayvocab.LabelTPUPodType: "!v6e-8"}, "v6e-16-0-w0", sim.StateCreated},
		{"negated in()", tpu(1), sel{rayvocab.LabelTPUPodType: "!in(v6e-8,v6e-16)"}, "v4-16-0-w0", sim.StateCreated},
		{"worker id", tpu(4), sel{rayvocab.LabelTPUWorkerID: "!0"}, "v6e-16-0-w1", sim.StateCreated},
		{"slice name", tpu(4), sel{rayvocab.LabelTPUSliceName: "v4-16-0"}, "v4-16-0-w0", sim.StateCreated},
		{"slice names in()", tpu(4), sel{rayvocab.LabelTPUSliceName: "in(nope,v4-16-0)", rayvocab.LabelTPUWorkerID: "1"}, "v4-16-0-w1", sim.StateCreated},
		{"not this slice", tpu(4), sel{rayvocab.LabelTPUSliceName: "!v6e-8-0", rayvocab.LabelTPUTopology: "!4x4"}, "v4-16-0-w0", sim.StateCreated},
		{"negation matches a node without the label", map[string]float64{"CPU": 8}, sel{rayvocab.LabelTPUPodType: "!in(v6e-16,v4-16,v6e-8)"}, "cpu-0", sim.StateCreated},
		{"two keys", tpu(4), sel{rayvocab.LabelTPUTopology: "4x4", rayvocab.LabelTPUWorkerID: "3"}, "v6e-16-0-w3", sim.StateCreated},
		{"no node has the labels", tpu(1), sel{rayvocab.LabelTPUPodType: "v6e-256"}, "", sim.StateInfeasible},
		{"unknown slice", tpu(1), sel{rayvocab.LabelTPUSliceName: "v6e-16-9"}, "", sim.StateInfeasible},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, "v6e-16,v4-16,v6e-8,cpu:1")
			pg, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{
				Bundles: []map[string]float64{tt.bundle}, BundleLabelSelector: []map[string]string{tt.selector},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := pg.Bundles[0].Node; got != tt.want || pg.State != tt.state {
				t.Errorf("got %q %s (%s), want %q %s", got, pg.State, pg.Reason, tt.want, tt.state)
			}
		})
	}
}

func TestInfeasibleReasons(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v6e-16")
	pg, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{
		Bundles:             []map[string]float64{{"TPU": 1}},
		BundleLabelSelector: []map[string]string{{rayvocab.LabelTPUPodType: "v6e-32"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "bundle 0 {TPU: 1} with label selector {ray.io/tpu-pod-type: v6e-32}: no node has labels {ray.io/tpu-pod-type: v6e-32}"
	if pg.State != sim.StateInfeasible || pg.Reason != want {
		t.Errorf("got %s %q, want INFEASIBLE %q", pg.State, pg.Reason, want)
	}

	// A v6e-16 host does not match "in(v6e-32, v6e-16)" in Ray 2.60; the
	// reason says why.
	pg, err = c.CreatePlacementGroup(sim.PlacementGroupRequest{
		Bundles:             []map[string]float64{{"TPU": 1}},
		BundleLabelSelector: []map[string]string{{rayvocab.LabelTPUPodType: "in(v6e-32, v6e-16)"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = `bundle 0 {TPU: 1} with label selector {ray.io/tpu-pod-type: in(v6e-32, v6e-16)}: no node has labels {ray.io/tpu-pod-type: in(v6e-32, v6e-16)} ` +
		`(ray.io/tpu-pod-type: Ray 2.60 keeps the space after a comma in "in(v6e-32, v6e-16)", so its item " v6e-16" matches no node label; write "in(v6e-32,v6e-16)")`
	if pg.State != sim.StateInfeasible || pg.Reason != want {
		t.Errorf("got %s %q, want INFEASIBLE %q", pg.State, pg.Reason, want)
	}
}

func TestRemoveFreesAndRetriesInOrder(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "v6e-16")
	host := map[string]float64{"TPU": 4}
	create := func(n int) *sim.PlacementGroup {
		t.Helper()
		pg, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(n, host)})
		if err != nil {
			t.Fatal(err)
		}
		return pg
	}
	a := create(4)
	b, cc, d := create(2), create(3), create(1)
	states := func() []sim.State {
		var out []sim.State
		for _, id := range []string{a.ID, b.ID, cc.ID, d.ID} {
			pg, ok := c.PlacementGroup(id)
			if !ok {
				out = append(out, sim.StateRemoved)
				continue
			}
			out = append(out, pg.State)
		}
		return out
	}
	if diff := cmp.Diff([]sim.State{sim.StateCreated, sim.StatePending, sim.StatePending, sim.StatePending}, states()); diff != "" {
		t.Fatalf("before removal (-want +got):\n%s", diff)
	}
	if got := c.Available("v6e-16-0-w0")["TPU"]; got != 0 {
		t.Fatalf("TPU free on a full host = %v", got)
	}
	if err := c.RemovePlacementGroup(a.ID); err != nil {
		t.Fatal(err)
	}
	// Retried in creation order: b (2 hosts) fits, c (3) does not, d (1) does.
	if diff := cmp.Diff([]sim.State{sim.StateRemoved, sim.StateCreated, sim.StatePending, sim.StateCreated}, states()); diff != "" {
		t.Fatalf("after removing a (-want +got):\n%s", diff)
	}
	if err := c.RemovePlacementGroup(b.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sim.State{sim.StateRemoved, sim.StateRemoved, sim.StateCreated, sim.StateCreated}, states()); diff != "" {
		t.Fatalf("after removing b (-want +got):\n%s", diff)
	}
	for _, id := range []string{cc.ID, d.ID} {
		if err := c.RemovePlacementGroup(id); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"v6e-16-0-w0", "v6e-16-0-w1", "v6e-16-0-w2", "v6e-16-0-w3"} {
		want := map[string]float64{"CPU": 8, "TPU": 4, "accelerator_type:TPU-V6E": 1, "memory": 32 << 30, "v6e-16-0": 1}
		if h == "v6e-16-0-w0" {
			want["TPU-v6e-16-head"] = 1
		}
		if diff := cmp.Diff(want, c.Available(h)); diff != "" {
			t.Errorf("%s not idle after every removal (-want +got):\n%s", h, diff)
		}
	}
	if err := c.RemovePlacementGroup(a.ID); err != nil {
		t.Errorf("removing a removed group: %v, want nil", err)
	}
	if err := c.RemovePlacementGroup("pg-99"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("removing an unknown group: %v, want ErrNotFound", err)
	}
	if got := len(c.PlacementGroups()); got != 0 {
		t.Errorf("%d groups left", got)
	}
}

func TestCreatePlacementGroupValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  sim.PlacementGroupRequest
		want []string
	}{
		{"no bundles", sim.PlacementGroupRequest{}, []string{"bundles Required"}},
		{"bad strategy", sim.PlacementGroupRequest{Strategy: "SPREADY", Bundles: repeat(1, map[string]float64{"CPU": 1})}, []string{"strategy NotSupported"}},
		{"empty bundle", sim.PlacementGroupRequest{Bundles: []map[string]float64{{}}}, []string{"bundles[0] Invalid"}},
		{"zero bundle", sim.PlacementGroupRequest{Bundles: []map[string]float64{{"CPU": 0}}}, []string{"bundles[0] Invalid"}},
		{"negative", sim.PlacementGroupRequest{Bundles: []map[string]float64{{"CPU": -1, "TPU": 1}}}, []string{"bundles[0][CPU] Invalid"}},
		{"selector count", sim.PlacementGroupRequest{Bundles: repeat(2, map[string]float64{"CPU": 1}), BundleLabelSelector: []map[string]string{nil}}, []string{"bundleLabelSelector Invalid"}},
		{"selector syntax", sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"CPU": 1}), BundleLabelSelector: []map[string]string{{"ray.io/tpu-pod-type": "in()"}}}, []string{"bundleLabelSelector[0][ray.io/tpu-pod-type] Invalid"}},
		{"selector key", sim.PlacementGroupRequest{Bundles: repeat(1, map[string]float64{"CPU": 1}), BundleLabelSelector: []map[string]string{{"-bad": "x"}}}, []string{"bundleLabelSelector[0][-bad] Invalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, "cpu:1")
			_, err := c.CreatePlacementGroup(tt.req)
			if diff := cmp.Diff(tt.want, fieldErrors(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "4*v6e-16,cpu:2")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				pg, err := c.CreatePlacementGroup(sim.PlacementGroupRequest{Strategy: placement.Spread, Bundles: repeat(1+(w+i)%4, map[string]float64{"TPU": 4})})
				if err != nil {
					t.Error(err)
					return
				}
				_ = c.Available("v6e-16-0-w0")
				if err := c.RemovePlacementGroup(pg.ID); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := len(c.PlacementGroups()); n != 0 {
		t.Errorf("%d groups left", n)
	}
	if got := c.Available("v6e-16-3-w3")["TPU"]; got != 4 {
		t.Errorf("TPU free = %v after every removal", got)
	}
}
