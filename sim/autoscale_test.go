package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
)

// slicePlanOf is a plan of one slice group per spec.
func slicePlanOf(t *testing.T, specs ...placement.SliceSpec) *placement.Plan {
	t.Helper()
	p := placement.NewSlicePlan("scale", compile(t, specs[0]))
	for _, s := range specs[1:] {
		p.Slices = append(p.Slices, compile(t, s))
	}
	return p
}

var (
	v4one   = placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 1}
	v4two   = placement.SliceSpec{Accelerator: "v4", Topology: "2x2x2", NumSlices: 2}
	v6eHost = placement.SliceSpec{Accelerator: "v6e", Topology: "2x4", NumSlices: 1}
)

// What Ray 2.60's autoscaler is predicted to do, case by case: the groups'
// final slices and the finding codes, in order. Each case's reason is in
// its name; PredictAutoscaling's doc cites the Ray code each follows.
func TestPredictAutoscaling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		spec    string
		plan    []placement.SliceSpec
		version sim.AutoscalerVersion
		to      []int
		codes   []string
	}{
		{"v1 starts one multi-host slice from zero", "v4-16:2x2x2{max=2},cpu:1", []placement.SliceSpec{v4one}, "", []int{1}, []string{sim.CodeScaleUp}},
		{"v1 two slices from zero, max 2", "v4-16:2x2x2{max=2}", []placement.SliceSpec{v4two}, sim.AutoscalerV1, []int{2}, []string{sim.CodeScaleUp, sim.CodeNoSliceScaleDown}},
		{"v1 overshoots to 3 with max 4: pods+1 as replicas", "v4-16:2x2x2{max=4}", []placement.SliceSpec{v4two}, sim.AutoscalerV1, []int{3}, []string{sim.CodeScaleUp, sim.CodeNoSliceScaleDown, sim.CodeSurplusSlices}},
		{"an idle slice is used first", "1*v4-16:2x2x2{max=2}", []placement.SliceSpec{v4one}, "", []int{1}, nil},
		{"min above what the plan needs stays", "v4-16:2x2x2{min=1,max=3}", []placement.SliceSpec{v4one}, "", []int{1}, nil},
		{"a fixed slice serves before the group grows", "v4-16:2x2x2,v4-16:2x2x2{max=2}", []placement.SliceSpec{v4two}, "", []int{1}, []string{sim.CodeScaleUp}},
		{"max too small", "v4-16:2x2x2{max=1}", []placement.SliceSpec{v4two}, "", []int{1}, []string{sim.CodeMaxSlicesTooSmall, sim.CodeScaleUp}},
		{"v2 does not start multi-host slices", "v4-16:2x2x2{max=2}", []placement.SliceSpec{v4one}, sim.AutoscalerV2, []int{0}, []string{sim.CodeV2MultiHost}},
		{"v2 scales single-host slices one by one", "v6e-8:2x4{max=3}", []placement.SliceSpec{v6eHost, v6eHost}, sim.AutoscalerV2, []int{2}, []string{sim.CodeScaleUp}},
		{"v1 single-host: one replica per slice", "v6e-8:2x4{max=3}", []placement.SliceSpec{v6eHost, v6eHost}, sim.AutoscalerV1, []int{2}, []string{sim.CodeScaleUp}},
		{"no group offers the topology", "v6e-16:4x4{max=2},cpu:1", []placement.SliceSpec{v4one}, "", []int{0}, []string{sim.CodeNoGroupOffers}},
		{"single-host group for a multi-host plan", "v6e-8:2x4@8{max=2}", []placement.SliceSpec{{Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 4}}, "", []int{0}, []string{sim.CodeHostsMismatch}},
		{"fixed slices all taken", "v4-16:2x2x2", []placement.SliceSpec{v4two}, "", nil, []string{sim.CodeNotAutoscaled}},
		{"two groups of one shape fill in spec order", "v4-16:2x2x2{max=1},v4-16:2x2x2{max=1}", []placement.SliceSpec{v4two}, "", []int{1, 1}, []string{sim.CodeScaleUp, sim.CodeScaleUp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spec, err := sim.ParseSpec(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := sim.PredictAutoscaling(spec, slicePlanOf(t, c.plan...), c.version)
			if err != nil {
				t.Fatal(err)
			}
			var to []int
			for _, g := range pred.Groups {
				to = append(to, g.To)
			}
			var got []string
			for _, f := range pred.Findings {
				got = append(got, f.Code)
			}
			if !slices.Equal(to, c.to) || !slices.Equal(got, c.codes) {
				t.Errorf("groups end at %v, findings %v; want %v, %v\n%v", to, got, c.to, c.codes, pred.Findings)
			}
			if wantErr := slices.ContainsFunc(pred.Findings, func(f placement.Finding) bool { return f.Severity == placement.SeverityError }); wantErr != (pred.Err() != nil) {
				t.Errorf("Err() = %v with findings %v", pred.Err(), pred.Findings)
			}
		})
	}
}

// The findings name what to change, with the numbers that make it work;
// following the advice gives a prediction without errors.
func TestPredictAutoscalingAdviceWorks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec, fixed string
		plan        placement.SliceSpec
		says        []string
	}{
		{"v4-16:2x2x2{max=1}", "v4-16:2x2x2{max=2}", v4two, []string{"needs 2 v4-16 slices (2x2x2)", "items[0] stops at maxSlices 1", "raise maxSlices of items[0] to 2"}},
		{"v4-16:2x2x2", "v4-16:2x2x2{max=2}", v4two, []string{"no group of them is autoscaled", "give items[0] maxSlices 2"}},
		{"v6e-16:4x4{max=2}", "v6e-16:4x4{max=2},v4-16:2x2x2{max=1}", v4one, []string{"v6e-16 (4x4)", "add a worker group of v4-16 2x2x2 with maxSlices 1"}},
		{"v6e-8:2x4@8{max=2}", "v6e-8:2x4@4{max=2}", placement.SliceSpec{Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 4},
			[]string{"multi-host (2 hosts of 4 chips)", "single-host (1 host of 8 chips)", "chips per host to 4"}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			p := slicePlanOf(t, c.plan)
			pred, err := sim.PredictAutoscaling(mustParse(t, c.spec), p, "")
			if err != nil {
				t.Fatal(err)
			}
			msg := pred.Err()
			if msg == nil {
				t.Fatalf("no error for %s", c.spec)
			}
			for _, s := range c.says {
				if !strings.Contains(msg.Error(), s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			fixed, err := sim.PredictAutoscaling(mustParse(t, c.fixed), p, "")
			if err != nil || fixed.Err() != nil {
				t.Errorf("following the advice (%s): %v, %v", c.fixed, err, fixed.Err())
			}
		})
	}
}

func mustParse(t *testing.T, s string) sim.Spec {
	t.Helper()
	spec, err := sim.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// The scaled spec places the plan: every slice reserved on an intact
// slice of the groups the autoscaler grew.
func TestPredictedSpecPlacesThePlan(t *testing.T) {
	t.Parallel()
	spec := mustParse(t, "v4-16:2x2x2{max=2},cpu:1")
	g := compile(t, v4two)
	pred, err := sim.PredictAutoscaling(spec, placement.NewSlicePlan("two", g), sim.AutoscalerV1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.NewCluster(spec); err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(pred.Spec(spec))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.PlaceSlices(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Diagnosis) != 0 {
		t.Errorf("diagnosis on the scaled cluster: %v", sp.Diagnosis)
	}
	if got := pred.Spec(spec).String(); got != "2*v4-16{max=2},cpu:1" {
		t.Errorf("scaled spec %q", got)
	}
	goldenJSON(t, "autoscale-v4-two-slices.golden.json", pred)
}

// Autoscaled items in the short form and in YAML: bounds and the slices
// a group has now, checked with field paths; String round-trips.
func TestAutoscaledSpecItems(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"v4-16{max=2}", "3*v4-16{min=1,max=4}", "v6e-8:2x4@4{max=2},cpu"} {
		spec := mustParse(t, s)
		if again := mustParse(t, spec.String()); !slices.Equal(again.Items, spec.Items) {
			t.Errorf("%s: String %q parses to %v, want %v", s, spec.String(), again.Items, spec.Items)
		}
	}
	if n := mustParse(t, "0*v4-16{max=2}").NumHosts(); n != 0 {
		t.Errorf("a group at 0 slices has %d hosts", n)
	}
	if n := mustParse(t, "v4-16{min=1,max=2}").NumHosts(); n != 2 {
		t.Errorf("a group at min 1 has %d hosts, want one slice's 2", n)
	}
	bad := map[string]string{
		"v4-16{min=3,max=2}":       "spec[0].minSlices",
		"5*v4-16{max=2}":           "spec[0].count",
		"0*v4-16{min=1,max=2}":     "spec[0].count",
		"0*v4-16":                  "spec[0].count",
		"v4-16{max=0}":             "spec[0].maxSlices",
		"v4-16{min=1}":             "spec[0].maxSlices",
		"cpu:2{max=2}":             "spec[0].maxSlices",
		"v4-16{min=-1,max=2}":      "spec[0].minSlices",
		"v4-16{max=two}":           "spec[0].maxSlices",
		"v4-16{max=2,max=3}":       "spec[0].options",
		"v4-16{min=1,max=2},cpu:x": "spec[1].count",
	}
	for s, want := range bad {
		_, err := sim.ParseSpec(s)
		if got := field.Errors(err); len(got) == 0 || got[0].Field != want {
			t.Errorf("ParseSpec(%q) = %v; want an error at %s", s, err, want)
		}
	}
	y := "nodes:\n- {podType: v4-16, topology: 2x2x2, minSlices: 0, maxSlices: 2}\n- {podType: v4-16, count: 0, maxSlices: 1}\n- {podType: cpu}\n"
	spec, err := sim.ParseSpecYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.String(); got != "v4-16{max=2},v4-16{max=1},cpu:1" {
		t.Errorf("YAML spec reads %q", got)
	}
	for y, want := range map[string]string{
		"nodes:\n- {podType: v4-16, maxSlices: 0}\n":                         "nodes[0].maxSlices",
		"nodes:\n- {podType: v4-16, count: 0}\n":                             "nodes[0].count",
		"nodes:\n- {podType: v4-16, count: 0, minSlices: 1, maxSlices: 2}\n": "nodes[0].count",
		"nodes:\n- {podType: v4-16, count: 3, maxSlices: 2}\n":               "nodes[0].count",
	} {
		_, err := sim.ParseSpecYAML([]byte(y))
		if got := field.Errors(err); len(got) == 0 || got[0].Field != want {
			t.Errorf("ParseSpecYAML(%q) = %v; want an error at %s", y, err, want)
		}
	}
}

// IdleSlices follows autoscaler v1 on KubeRay: it keeps min_workers
// hosts and writes them as replicas, so a multi-host group with a minimum
// stays above it once everything idles; a group at its minimum stays.
func TestIdleSlices(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		g    sim.GroupScale
		want int
	}{
		{sim.GroupScale{HostsPerSlice: 2, MinSlices: 0, MaxSlices: 2, To: 2}, 0},
		{sim.GroupScale{HostsPerSlice: 2, MinSlices: 1, MaxSlices: 2, To: 2}, 2},
		{sim.GroupScale{HostsPerSlice: 2, MinSlices: 1, MaxSlices: 4, To: 3}, 2},
		{sim.GroupScale{HostsPerSlice: 4, MinSlices: 1, MaxSlices: 3, To: 2}, 3},
		{sim.GroupScale{HostsPerSlice: 2, MinSlices: 1, MaxSlices: 2, To: 1}, 1},
		{sim.GroupScale{HostsPerSlice: 1, MinSlices: 1, MaxSlices: 4, To: 3}, 1},
	} {
		if got := c.g.IdleSlices(); got != c.want {
			t.Errorf("%+v: IdleSlices %d, want %d", c.g, got, c.want)
		}
	}
}

// A version other than v1 and v2 is refused, naming both.
func TestPredictAutoscalingVersion(t *testing.T) {
	t.Parallel()
	_, err := sim.PredictAutoscaling(mustParse(t, "v4-16{max=1}"), slicePlanOf(t, v4one), "v3")
	if err == nil || !strings.Contains(err.Error(), `"v3"`) || !strings.Contains(err.Error(), "v1") || !strings.Contains(err.Error(), "v2") {
		t.Errorf("version v3: %v", err)
	}
}

// The words of every kind of finding, as raytpu plan prints them.
func TestPredictAutoscalingGolden(t *testing.T) {
	t.Parallel()
	type entry struct {
		Spec       string                   `json:"spec"`
		Plan       string                   `json:"plan"`
		Version    sim.AutoscalerVersion    `json:"version"`
		Prediction *sim.AutoscalePrediction `json:"prediction"`
	}
	var out []entry
	for _, c := range []struct {
		spec string
		plan placement.SliceSpec
		v    sim.AutoscalerVersion
	}{
		{"v4-16:2x2x2{max=4}", v4two, sim.AutoscalerV1},
		{"v4-16:2x2x2{max=1}", v4two, sim.AutoscalerV1},
		{"v4-16:2x2x2{max=2}", v4one, sim.AutoscalerV2},
		{"v6e-16:4x4{max=2},cpu:1", v4one, sim.AutoscalerV1},
		{"v6e-8:2x4@8{max=2}", placement.SliceSpec{Accelerator: "v6e", Topology: "2x4", ChipsPerHost: 4}, sim.AutoscalerV1},
		{"v4-16:2x2x2", v4two, sim.AutoscalerV1},
	} {
		g := compile(t, c.plan)
		pred, err := sim.PredictAutoscaling(mustParse(t, c.spec), placement.NewSlicePlan("scale", g), c.v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{c.spec, g.String(), c.v, pred})
	}
	goldenJSON(t, "autoscale-findings.golden.json", out)
}

// For any spec and slice request, the prediction never panics, is the
// same twice, keeps every group within its bounds and only grows it; and
// when it has no error the plan places on the cluster it leaves with no
// error finding.
func FuzzPredictAutoscaling(f *testing.F) {
	f.Add("v4-16:2x2x2{max=2},cpu:1", "v4", "2x2x2", 2, "v1")
	f.Add("v4-16:2x2x2{max=4}", "v4", "2x2x2", 2, "")
	f.Add("v6e-8:2x4{max=3},v6e-16{max=1}", "v6e", "2x4", 2, "v2")
	f.Add("v6e-8:2x4@8{max=2}", "v6e", "4x4", 1, "v1")
	f.Fuzz(func(t *testing.T, in, accel, topo string, n int, version string) {
		spec, err := sim.ParseSpec(in)
		if err != nil || n < 1 || n > 8 || spec.NumHosts() > 256 {
			return
		}
		g, err := placement.SliceSpec{Accelerator: accel, Topology: topo, NumSlices: n}.Compile(nil)
		if err != nil {
			return
		}
		p := placement.NewSlicePlan("fuzz", g)
		pred, err := sim.PredictAutoscaling(spec, p, sim.AutoscalerVersion(version))
		if err != nil {
			return
		}
		again, _ := sim.PredictAutoscaling(spec, p, sim.AutoscalerVersion(version))
		if !slices.EqualFunc(pred.Groups, again.Groups, func(a, b sim.GroupScale) bool { return a == b }) || len(pred.Findings) != len(again.Findings) {
			t.Fatal("two predictions differ")
		}
		for _, gs := range pred.Groups {
			if gs.To < gs.From || gs.To > gs.MaxSlices || gs.From < gs.MinSlices {
				t.Fatalf("%s: %+v", in, gs)
			}
		}
		if pred.Err() != nil || pred.Spec(spec).NumHosts() > 512 {
			return
		}
		c, err := sim.NewCluster(pred.Spec(spec))
		if err != nil {
			t.Fatalf("scaled spec %q: %v", pred.Spec(spec), err)
		}
		sp, err := c.PlaceSlices(g)
		if err != nil {
			t.Fatalf("%s on %s: no prediction error, but placing fails: %v", g, pred.Spec(spec), err)
		}
		for _, f := range sp.Diagnosis {
			if f.Severity == placement.SeverityError {
				t.Fatalf("%s on %s: no prediction error, but %s: %s", g, pred.Spec(spec), f.Code, f.Message)
			}
		}
	})
}
