package profiler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/profiler"
)

func TestServersFromLog(t *testing.T) {
	t.Parallel()
	log := `(TrainController pid=1) Started training worker group of size 2
RAYTPU_PROFILER {"ip": "10.0.0.2", "node_id": "n1", "pid": 11, "port": 9001, "rank": 1}
RAYTPU_PROFILER {"ip": "10.0.0.1", "node_id": "n0", "pid": 10, "port": 9000, "rank": 0}
user output that mentions RAYTPU_PROFILER {not json
RAYTPU_PROFILER {"ip": "10.0.0.3", "node_id": "n2", "pid": 12, "port": 9002, "rank": 1}
RAYTPU_PROFILER {"ip": "10.0.0.4", "node_id": "n3", "pid": 13, "rank": 2, "error": "ValueError: Only one profiler server can be active at a time."}
`
	got := profiler.ServersFromLog(log)
	want := []profiler.Server{
		{Rank: 0, NodeID: "n0", IP: "10.0.0.1", Port: 9000, PID: 10},
		{Rank: 1, NodeID: "n2", IP: "10.0.0.3", Port: 9002, PID: 12},
		{Rank: 2, NodeID: "n3", IP: "10.0.0.4", PID: 13, Error: "ValueError: Only one profiler server can be active at a time."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ServersFromLog (-want +got):\n%s", diff)
	}
	if s, err := profiler.FindRank(got, 1); err != nil || s.Address() != "10.0.0.3:9002" {
		t.Errorf("FindRank(1) = %+v, %v; want 10.0.0.3:9002", s, err)
	}
	for _, rank := range []int{2, 3} {
		if _, err := profiler.FindRank(got, rank); err == nil {
			t.Errorf("FindRank(%d) = nil error, want one (rank 2 failed to start, rank 3 does not exist)", rank)
		}
	}
	if _, err := profiler.FindRank(nil, 0); err == nil {
		t.Error("FindRank in an empty list = nil error")
	}
}
