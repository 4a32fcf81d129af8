package sim_test

import (
	"slices"
	"testing"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

func TestLoseSlice(t *testing.T) {
	t.Parallel()
	oneSlice := placement.NewSlicePlan("train", compile(t, placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", Name: "train"}))
	twoSlices := placement.NewSlicePlan("train", compile(t, placement.SliceSpec{Topology: "2x2x2", Accelerator: "v4", NumSlices: 2, Name: "train"}))
	cases := []struct {
		name      string
		plan      *placement.Plan
		lose      string
		recovered bool
		to        []string
		intact    int
	}{
		// The whole slice goes, its head with it: no start timeout, the
		// group restarts on the spare slice.
		{"the group's slice, spare slice", oneSlice, "v4-16-0", true, []string{"v4-16-1"}, 1},
		// Two slices needed, one left: no start succeeds until the slice
		// is back.
		{"one of two slices, no spare", twoSlices, "v4-16-1", false, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl := newCluster(t, "2*v4-16,v4-8")
			before, err := cl.Place(t.Context(), c.plan)
			if err != nil || before.Diagnosis.HasErrors() {
				t.Fatalf("place: %v %v", err, before.Diagnosis)
			}
			loss, err := cl.LoseSlice(t.Context(), c.plan, before, c.lose)
			if err != nil {
				t.Fatal(err)
			}
			if loss.Recovered != c.recovered || loss.StartTimeouts != 0 || loss.IntactSlices["v4-16"] != c.intact {
				t.Errorf("recovered %v, start timeouts %d, intact %v; want %v, 0, %d", loss.Recovered, loss.StartTimeouts, loss.IntactSlices, c.recovered, c.intact)
			}
			if want := []string{c.lose + "-w0", c.lose + "-w1"}; loss.Slice != c.lose || !slices.Equal(loss.Hosts, want) {
				t.Errorf("lost slice %s hosts %v, want %s hosts %v", loss.Slice, loss.Hosts, c.lose, want)
			}
			if c.recovered && !slices.Equal(slicesOf(loss.After), c.to) {
				t.Errorf("group moved to %v, want %v", slicesOf(loss.After), c.to)
			}
			if _, err := cl.LoseSlice(t.Context(), c.plan, nil, c.lose); err == nil {
				t.Error("LoseSlice of a slice already lost: no error")
			}
			// The slice stays gone until revived (the node pool recreated);
			// then the plan lands as before, on the same slice names.
			if err := cl.ReviveSlice(c.lose); err != nil {
				t.Fatal(err)
			}
			again, err := cl.Place(t.Context(), c.plan)
			if err != nil || again.Diagnosis.HasErrors() || !slices.Equal(slicesOf(again), slicesOf(before)) {
				t.Errorf("after ReviveSlice: %v %v on %v, want %v", err, again.Diagnosis, slicesOf(again), slicesOf(before))
			}
		})
	}
	cl := newCluster(t, "2*v4-16,v4-8")
	if _, err := cl.LoseSlice(t.Context(), oneSlice, nil, "cpu-0"); err == nil {
		t.Error("LoseSlice accepted a slice that does not exist")
	}
	if _, err := cl.LoseSlice(t.Context(), nil, nil, "v4-16-0"); err == nil {
		t.Error("LoseSlice of a nil plan: no error")
	}
	if err := cl.ReviveSlice("v4-16-0"); err == nil {
		t.Error("ReviveSlice of a slice never lost: no error")
	}
	var nilCluster *sim.Cluster
	if _, err := nilCluster.LoseSlice(t.Context(), oneSlice, nil, "v4-16-0"); err == nil {
		t.Error("LoseSlice on a nil cluster: no error")
	}
	if err := nilCluster.ReviveSlice("v4-16-0"); err == nil {
		t.Error("ReviveSlice on a nil cluster: no error")
	}
}
