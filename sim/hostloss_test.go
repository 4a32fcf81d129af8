package sim_test

import (
	"slices"
	"testing"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// slicesOf lists the slices a result's bundles landed on, in order.
func slicesOf(res *sim.Result) []string {
	var out []string
	for _, sp := range res.Slices {
		for _, b := range sp.Bundles {
			if b.SliceName != "" && !slices.Contains(out, b.SliceName) {
				out = append(out, b.SliceName)
			}
		}
	}
	return out
}

func TestLoseHost(t *testing.T) {
	t.Parallel()
	oneSlice := placement.NewSlicePlan("train", compile(t, placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", Name: "train"}))
	twoSlices := placement.NewSlicePlan("train", compile(t, placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, Name: "train"}))
	cases := []struct {
		name          string
		plan          *placement.Plan
		lose          string // a host of the first slice of the group
		recovered     bool
		to            []string
		startTimeouts int
		intact        int
	}{
		// The broken slice keeps its head: the first restart reserves it
		// and times out, the second lands on the spare slice.
		{"worker 1 lost, spare slice", oneSlice, "v4-16-0-w1", true, []string{"v4-16-1"}, 1, 1},
		// The head itself is gone: the restart goes straight to the spare.
		{"worker 0 lost, spare slice", oneSlice, "v4-16-0-w0", true, []string{"v4-16-1"}, 0, 1},
		// Two slices needed, one intact left: no start can succeed.
		{"no spare slice", twoSlices, "v4-16-0-w1", false, nil, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl := newCluster(t, "2*v4-16,v4-8")
			before, err := cl.Place(t.Context(), c.plan)
			if err != nil || before.Diagnosis.HasErrors() {
				t.Fatalf("place: %v %v", err, before.Diagnosis)
			}
			if got := slicesOf(before)[0]; got != "v4-16-0" {
				t.Fatalf("group placed on %s first, want v4-16-0", got)
			}
			loss, err := cl.LoseHost(t.Context(), c.plan, before, c.lose)
			if err != nil {
				t.Fatal(err)
			}
			if loss.Recovered != c.recovered || loss.StartTimeouts != c.startTimeouts || loss.IntactSlices["v4-16"] != c.intact {
				t.Errorf("recovered %v, start timeouts %d, intact %v; want %v, %d, %d", loss.Recovered, loss.StartTimeouts, loss.IntactSlices, c.recovered, c.startTimeouts, c.intact)
			}
			if c.recovered && !slices.Equal(slicesOf(loss.After), c.to) {
				t.Errorf("group moved to %v, want %v", slicesOf(loss.After), c.to)
			}
			if loss.Slice != "v4-16-0" || loss.Host != c.lose {
				t.Errorf("loss of %s on %s, want %s on v4-16-0", loss.Host, loss.Slice, c.lose)
			}
			// The host stays gone until revived; then the plan fits as before.
			if err := cl.ReviveHost(c.lose); err != nil {
				t.Fatal(err)
			}
			again, err := cl.Place(t.Context(), c.plan)
			if err != nil || again.Diagnosis.HasErrors() || !slices.Equal(slicesOf(again), slicesOf(before)) {
				t.Errorf("after ReviveHost: %v %v on %v, want %v", err, again.Diagnosis, slicesOf(again), slicesOf(before))
			}
		})
	}
	cl := newCluster(t, "2*v4-16,v4-8")
	if _, err := cl.LoseHost(t.Context(), oneSlice, nil, "cpu-0"); err == nil {
		t.Error("LoseHost accepted a host that does not exist")
	}
}
