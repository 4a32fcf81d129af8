package raybackend

import (
	"testing"
	"time"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
)

func TestWaitsForCapacity(t *testing.T) {
	t.Parallel()
	pending := placement.PendingFinding("pg", "waits for a node to be free")
	infeasible := placement.InfeasibleFinding("pg", "no alive node offers TPU")
	head := placement.Finding{Severity: placement.SeverityError, Code: placement.CodeHeadReservationFailed}
	spans := placement.Finding{Severity: placement.SeverityError, Code: placement.CodeSpansSlices}
	for _, tc := range []struct {
		name string
		d    placement.Diagnosis
		want bool
	}{
		{"pending", placement.Diagnosis{pending}, true},
		{"infeasible and no head", placement.Diagnosis{infeasible, head}, true},
		{"bundles across slices", placement.Diagnosis{pending, spans}, false},
	} {
		if got := waitsForCapacity(tc.d); got != tc.want {
			t.Errorf("%s: waitsForCapacity = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The autoscaler's reports as Wait reads them, one per poll: nodes
// starting hold the verdict off, and so do the scaleSettle after the last
// report that had some; a report that stops changing is not believed; a
// cluster with no autoscaler never holds it off.
func TestAutoscalerWatch(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1796000000, 0)
	starting := func(at time.Time, n int) ray.ClusterStatus {
		return ray.ClusterStatus{Time: at, Autoscaler: &ray.AutoscalerReport{
			ActiveNodes:     map[string]int{"headgroup": 1},
			PendingLaunches: map[string]int{"tpu": n},
			NodeTypeMapping: map[string]string{"10.0.0.1": "headgroup"},
		}}
	}
	var w autoscalerWatch
	for i, step := range []struct {
		st      ray.ClusterStatus
		at      time.Duration // local time since t0
		scaling bool
		news    string
	}{
		{ray.ClusterStatus{}, 0, false, ""},                             // no autoscaler
		{starting(t0, 2), time.Second, true, "2 tpu nodes"},             // launching
		{starting(t0.Add(5*time.Second), 2), 6 * time.Second, true, ""}, // the same, said once
		{starting(t0.Add(10*time.Second), 1), 11 * time.Second, true, "1 tpu node"},
		{starting(t0.Add(15*time.Second), 0), 16 * time.Second, true, ""},                   // up: settling
		{starting(t0.Add(40*time.Second), 0), 11*time.Second + scaleSettle, false, ""},      // settled
		{starting(t0.Add(45*time.Second), 1), 46 * time.Second, true, "1 tpu node"},         // starting again
		{starting(t0.Add(45*time.Second), 1), 46*time.Second + scaleReportStale, false, ""}, // its report stale
	} {
		scaling, news := w.observe(step.st, t0.Add(step.at))
		if scaling != step.scaling || news != step.news {
			t.Errorf("report %d: observe = %v, %q; want %v, %q", i, scaling, news, step.scaling, step.news)
		}
	}
}
