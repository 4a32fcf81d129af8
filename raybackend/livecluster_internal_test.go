package raybackend

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/ray"
)

// The live diagnosis matches label selectors as Ray 2.60's raylet does
// (placement.LabelSelector): the space Ray accepts after a comma stays part
// of the item, so "in(a, b)" does not match a node labelled b, and the
// reason says so.
func TestLiveReasonMatchesSelectorsAsRay(t *testing.T) {
	t.Parallel()
	lc := newLiveCluster([]ray.Node{
		{ID: "n1", State: "ALIVE", Labels: map[string]string{"zone": "b"}, Resources: map[string]float64{"CPU": 4}},
		{ID: "n2", State: "ALIVE", Labels: map[string]string{"zone": "c"}, Resources: map[string]float64{"CPU": 4}},
	})
	res := map[string]float64{"CPU": 1}
	for _, c := range []struct {
		sel     string
		fits    int
		inWords string
	}{
		{"in(a,b)", 1, ""}, // "": the reason is not checked
		{"in(b,c)", 2, ""},
		{"in(a, b)", 0, `so its item " b" matches no node label; write "in(a,b)"`},
		{"!in(c, b)", 1, ""}, // excludes c only
		{"(b)", 0, `Ray reads "(b)" without "in" as that literal value`},
		{"!(b)", 2, ""},
		{"b", 1, ""},
	} {
		u := lc.unplaced(0, res, map[string]string{"zone": c.sel})
		fits, reason := u.Fits, u.InfeasibleReason()
		if fits > 0 {
			reason = u.PendingReason()
		}
		if fits != c.fits {
			t.Errorf("{zone: %s}: %d nodes fit, want %d (%s)", c.sel, fits, c.fits, reason)
		}
		if c.inWords != "" && !strings.Contains(reason, c.inWords) {
			t.Errorf("{zone: %s}: reason %q does not say %q", c.sel, reason, c.inWords)
		}
		if free := lc.anyFree(res, map[string]string{"zone": c.sel}); free != (c.fits > 0) {
			t.Errorf("{zone: %s}: anyFree = %v", c.sel, free)
		}
	}
}
