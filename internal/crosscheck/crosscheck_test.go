package crosscheck

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/sim"
)

// mode is the level at which a case compares where bundles landed (see
// the package doc).
type mode int

const (
	modeSlices mode = iota // partition into slices; per slice, bundles per host
	modeExact              // every bundle's host
	modeHosts              // (pod type, bundles) per host used
	modeCount              // bundles per host used (and, with spans, whether they span slices)
)

func (m mode) String() string {
	return [...]string{"slices", "exact", "hosts", "count"}[m]
}

// step is one request, in the JSON testdata/place.py reads.
type step struct {
	Kind string `json:"kind"` // "slice" or "raw"
	// slice_placement_group arguments.
	Topology           string             `json:"topology,omitempty"`
	Accelerator        string             `json:"accelerator,omitempty"`
	ResourcesPerBundle map[string]float64 `json:"resources_per_bundle,omitempty"`
	NumSlices          int                `json:"num_slices,omitempty"`
	PGPerSlice         bool               `json:"pg_per_slice,omitempty"`
	HeadTimeoutS       float64            `json:"head_timeout_s,omitempty"`
	// placement_group arguments (Strategy, Name and BundleLabelSelector
	// serve both).
	Bundles             []map[string]float64 `json:"bundles,omitempty"`
	Strategy            string               `json:"strategy,omitempty"`
	Name                string               `json:"name,omitempty"`
	BundleLabelSelector []map[string]string  `json:"bundle_label_selector,omitempty"`
}

// xcase is one row of the table.
type xcase struct {
	name  string
	steps []step
	mode  mode
	// names compares real slice and host names instead of numbering slices
	// by first appearance (for requests pinned by name).
	names bool
	// spans adds to modeCount whether the bundles span more than one
	// slice, for cases where every tie-break gives the same answer.
	spans bool
	// want is the outcome the case is written for (see statusOf); it
	// guards against both sides agreeing on a broken harness.
	want string
}

type rayCase struct {
	ID            string  `json:"id"`
	Steps         []step  `json:"steps"`
	ReadyTimeoutS float64 `json:"ready_timeout_s"`
	SettleS       float64 `json:"settle_s"`
}

type rayAnswer struct {
	ID    string `json:"id"`
	Steps []struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		Heads  []*rayNode `json:"heads"`
		Groups []struct {
			State           string     `json:"state"`
			RayState        string     `json:"ray_state"`
			SchedulingState string     `json:"scheduling_state"`
			Bundles         []*rayNode `json:"bundles"`
		} `json:"groups"`
	} `json:"steps"`
	Error         string   `json:"error"`
	CleanupErrors []string `json:"cleanup_errors"`
	Seconds       float64  `json:"seconds"`
}

// where is the host a bundle landed on; Slice is "" for Ray's head node
// (the simulator's CPU-only node).
type where struct {
	Slice, Worker, PodType string
}

func (w where) host() string {
	if w.Slice == "" {
		return "head"
	}
	return w.Slice + "-w" + w.Worker
}

type groupOutcome struct {
	State   string
	Bundles []*where // nil while not placed
	Detail  string   // Ray's state and scheduling state, or the simulator's reason
}

type stepOutcome struct {
	Error  string // the exception: TimeoutError when a head was not reserved
	Msg    string
	Heads  []string // slices whose head was reserved
	Groups []groupOutcome
}

type outcome []stepOutcome

const (
	headTimeoutFeasible   = 120.0 // seconds; a head that can be reserved is, at once
	headTimeoutInfeasible = 10.0
)

func tpu(n float64) map[string]float64 { return map[string]float64{"TPU": n} }

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func sel(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func sliceStep(topology string, mods ...func(*step)) step {
	s := step{Kind: "slice", Topology: topology, Accelerator: "v4", HeadTimeoutS: headTimeoutFeasible}
	for _, m := range mods {
		m(&s)
	}
	return s
}

func rawStep(strategy string, bundles []map[string]float64, selectors ...map[string]string) step {
	s := step{Kind: "raw", Strategy: strategy, Bundles: bundles}
	if len(selectors) == 1 && len(bundles) > 1 {
		selectors = repeat(selectors[0], len(bundles))
	}
	s.BundleLabelSelector = selectors
	return s
}

func numSlices(n int) func(*step)    { return func(s *step) { s.NumSlices = n } }
func shortHeadTimeout(s *step)       { s.HeadTimeoutS = headTimeoutInfeasible }
func pgPerSlice(s *step)             { s.PGPerSlice = true; s.Name = "pps" }
func strategy(st string) func(*step) { return func(s *step) { s.Strategy = st } }
func perBundle(r map[string]float64) func(*step) {
	return func(s *step) { s.ResourcesPerBundle = r }
}
func selectors(m map[string]string, n int) func(*step) {
	return func(s *step) { s.BundleLabelSelector = repeat(m, n) }
}

const (
	keySlice  = rayvocab.LabelTPUSliceName
	keyWorker = rayvocab.LabelTPUWorkerID
	keyPod    = rayvocab.LabelTPUPodType
)

// cases run on the fleet 2*v4-16 (slices v4-16-0, v4-16-1: two hosts of 4
// TPU each) + v4-8 (v4-8-0: one host of 4 TPU), one CPU per host, plus the
// head (one CPU).
var cases = []xcase{
	{name: "slice/v4-2x2x2", mode: modeSlices, want: "CREATED",
		steps: []step{sliceStep("2x2x2")}},
	{name: "slice/v4-2x2x2-per-chip-cpu0", mode: modeSlices, want: "CREATED",
		steps: []step{sliceStep("2x2x2", perBundle(map[string]float64{"TPU": 1, "CPU": 0}))}},
	// {TPU: 1} gets CPU: 1 added per bundle: 8 CPU on a slice of 2.
	// Ray: PENDING (scheduling state NO_RESOURCES), since every bundle
	// alone fits a node of the slice.
	{name: "slice/v4-2x2x2-per-chip", mode: modeSlices, want: "PENDING",
		steps: []step{sliceStep("2x2x2", perBundle(tpu(1)))}},
	{name: "slice/v4-2x2x2-strict-pack", mode: modeSlices, want: "INFEASIBLE",
		steps: []step{sliceStep("2x2x2", strategy("STRICT_PACK"))}},
	{name: "slice/v4-2x2x2-pack", mode: modeSlices, want: "CREATED",
		steps: []step{sliceStep("2x2x2", strategy("PACK"))}},
	{name: "slice/2-slices", mode: modeSlices, want: "CREATED",
		steps: []step{sliceStep("2x2x2", numSlices(2))}},
	{name: "slice/3-slices", mode: modeSlices, want: "err:TimeoutError",
		steps: []step{sliceStep("2x2x2", numSlices(3), shortHeadTimeout)}},
	{name: "slice/pg-per-slice", mode: modeSlices, want: "CREATED,CREATED",
		steps: []step{sliceStep("2x2x2", numSlices(2), pgPerSlice)}},
	// A single-host slice gets neither a head reservation nor a pod-type
	// selector: any idle TPU host with 4 chips is as good to Ray.
	{name: "slice/v4-2x2x1-idle", mode: modeCount, spans: true, want: "CREATED",
		steps: []step{sliceStep("2x2x1")}},
	{name: "slice/v4-2x2x1-after-v4-16s", mode: modeSlices, want: "CREATED; CREATED",
		steps: []step{sliceStep("2x2x2", numSlices(2)), sliceStep("2x2x1")}},
	{name: "slice/pinned-by-selector", mode: modeSlices, names: true, want: "CREATED",
		steps: []step{sliceStep("2x2x2", selectors(sel(keySlice, "v4-16-1"), 2))}},
	{name: "slice/sequential", mode: modeSlices, want: "CREATED; CREATED; err:TimeoutError",
		steps: []step{sliceStep("2x2x2"), sliceStep("2x2x2"), sliceStep("2x2x2", shortHeadTimeout)}},
	{name: "slice/full-cluster", mode: modeSlices, want: "CREATED; CREATED; PENDING",
		steps: []step{sliceStep("2x2x2", numSlices(2)), sliceStep("2x2x1"), rawStep("PACK", []map[string]float64{tpu(1)})}},

	// PACK: two bundles on each of two hosts; which two hosts (one slice
	// or two) is a tie in Ray, so spans is not compared.
	{name: "raw/pack-4x2", mode: modeCount, want: "CREATED",
		steps: []step{rawStep("PACK", repeat(tpu(2), 4))}},
	{name: "raw/spread-4x2", mode: modeCount, spans: true, want: "CREATED",
		steps: []step{rawStep("SPREAD", repeat(tpu(2), 4))}},
	{name: "raw/strict-pack-2x4", mode: modeCount, want: "INFEASIBLE",
		steps: []step{rawStep("STRICT_PACK", repeat(tpu(4), 2))}},
	{name: "raw/strict-pack-2x2", mode: modeCount, spans: true, want: "CREATED",
		steps: []step{rawStep("STRICT_PACK", repeat(tpu(2), 2))}},
	{name: "raw/strict-spread-5x4", mode: modeHosts, want: "CREATED",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 5))}},
	// Ray's STRICT_SPREAD is INFEASIBLE only with more bundles than alive
	// nodes (6 here, the head included, whatever their resources or
	// labels); else a group that does not fit is NO_RESOURCES: PENDING.
	{name: "raw/strict-spread-6x4", mode: modeHosts, want: "PENDING",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 6))}},
	{name: "raw/strict-spread-7x4", mode: modeHosts, want: "INFEASIBLE",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 7))}},
	{name: "raw/spread-6x4", mode: modeHosts, want: "PENDING",
		steps: []step{rawStep("SPREAD", repeat(tpu(4), 6))}},
	// No node has 8 TPU: INFEASIBLE whatever the strategy.
	{name: "raw/pack-1x8", mode: modeHosts, want: "INFEASIBLE",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(8)})}},
	{name: "raw/strict-spread-6-cpu", mode: modeHosts, want: "CREATED",
		steps: []step{rawStep("STRICT_SPREAD", repeat(map[string]float64{"CPU": 1}, 6))}},
	{name: "raw/strict-spread-7-cpu", mode: modeHosts, want: "INFEASIBLE",
		steps: []step{rawStep("STRICT_SPREAD", repeat(map[string]float64{"CPU": 1}, 7))}},
	// 16 × {TPU: 1} without a topology. PACK fills 4 of the 5 hosts, and
	// which 4 is a tie in Ray: the per-slice totals (8+8, or 8+4+4) are not
	// comparable, but 4 hosts of 4 bundles always span at least 2 slices
	// (no slice has more than 2 hosts). SPREAD uses every host: 4,3,3,3,3.
	{name: "raw/per-chip-16-pack", mode: modeCount, spans: true, want: "CREATED",
		steps: []step{rawStep("PACK", repeat(tpu(1), 16))}},
	{name: "raw/per-chip-16-spread", mode: modeCount, spans: true, want: "CREATED",
		steps: []step{rawStep("SPREAD", repeat(tpu(1), 16))}},
	{name: "raw/full-cluster", mode: modeHosts, want: "CREATED; PENDING",
		steps: []step{rawStep("PACK", repeat(tpu(1), 20)), rawStep("PACK", []map[string]float64{tpu(1)})}},
	{name: "raw/pinned-slice", mode: modeExact, want: "CREATED",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(4)}, sel(keySlice, "v4-8-0"))}},
	{name: "raw/worker-1", mode: modeHosts, names: true, want: "CREATED",
		steps: []step{rawStep("SPREAD", repeat(tpu(4), 2), sel(keyWorker, "1"))}},
	{name: "raw/not-slice-0", mode: modeHosts, names: true, want: "CREATED",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 3), sel(keySlice, "!v4-16-0"))}},
	{name: "raw/in-v4-8-strict-spread", mode: modeHosts, want: "PENDING",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 2), sel(keyPod, "in(v4-8)"))}},
	// Ray 2.60 accepts one space after a comma in in(...) but its raylet
	// keeps it: the item is " v4-8-0", which no node holds.
	{name: "raw/in-no-space", mode: modeExact, want: "CREATED",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(4)}, sel(keySlice, "in(nope,v4-8-0)"))}},
	{name: "raw/in-space-kept", mode: modeExact, want: "INFEASIBLE",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(4)}, sel(keySlice, "in(nope, v4-8-0)"))}},
	// "!in(v4-16-0, v4-16-1)" excludes v4-16-0 only: three hosts qualify.
	{name: "raw/not-in-space-kept", mode: modeHosts, names: true, want: "CREATED",
		steps: []step{rawStep("STRICT_SPREAD", repeat(tpu(4), 3), sel(keySlice, "!in(v4-16-0, v4-16-1)"))}},
	// Parentheses without "in": accepted, read as one literal value.
	{name: "raw/parens-without-in", mode: modeExact, want: "INFEASIBLE",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(4)}, sel(keySlice, "(v4-8-0)"))}},
	{name: "raw/unknown-slice", mode: modeHosts, want: "INFEASIBLE",
		steps: []step{rawStep("PACK", []map[string]float64{tpu(4)}, sel(keySlice, "nope"))}},
	{name: "raw/after-slice-group", mode: modeSlices, want: "CREATED; CREATED; PENDING",
		steps: []step{
			sliceStep("2x2x2"),
			rawStep("STRICT_SPREAD", repeat(tpu(4), 2), sel(keyPod, "v4-16")),
			rawStep("PACK", []map[string]float64{tpu(4)}, sel(keyPod, "v4-16")),
		}},
}

func TestSimAgreesWithRay(t *testing.T) {
	if startErr != nil {
		t.Fatalf("this test needs a local Ray cluster: %v", startErr)
	}
	if err := checkFleet(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var agree int
	var disagreements []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			simOut, err := runSim(c)
			if err != nil {
				t.Fatalf("simulator: %v", err)
			}
			rayOut, secs, err := runRay(c)
			if err != nil {
				t.Fatalf("Ray: %v", err)
			}
			simStatus, rayStatus := statusOf(simOut), statusOf(rayOut)
			simLand, rayLand := landing(simOut, c), landing(rayOut, c)
			t.Logf("Ray (%.1fs): %s | %s", secs, rayStatus, rayLand)
			t.Logf("sim:         %s | %s", simStatus, simLand)
			t.Logf("Ray detail: %s", detail(rayOut))
			var problems []string
			if simStatus != rayStatus {
				problems = append(problems, fmt.Sprintf("outcome: Ray %q, simulator %q\n    Ray: %s\n    sim: %s", rayStatus, simStatus, detail(rayOut), detail(simOut)))
			} else if simLand != rayLand {
				problems = append(problems, fmt.Sprintf("placement (%s): Ray %q, simulator %q\n    Ray: %s\n    sim: %s", c.mode, rayLand, simLand, detail(rayOut), detail(simOut)))
			}
			if len(problems) == 0 {
				agree++
			} else {
				msg := fmt.Sprintf("%s: %s\n    request: %s", c.name, strings.Join(problems, "; "), describeSteps(c.steps))
				disagreements = append(disagreements, msg)
				t.Errorf("simulator disagrees with Ray: %s", msg)
			}
			if rayStatus != c.want {
				t.Errorf("Ray's outcome %q is not the %q this case is written for", rayStatus, c.want)
			}
		})
	}
	t.Logf("%d of %d agree (%.0fs)", agree, len(cases), time.Since(start).Seconds())
	if len(disagreements) > 0 {
		t.Errorf("%d of %d agree; disagreements:\n  %s", agree, len(cases), strings.Join(disagreements, "\n  "))
	}
}

// checkFleet compares the TPU hosts Ray registered with the simulator's.
func checkFleet() error {
	spec, err := sim.ParseSpec(simSpec)
	if err != nil {
		return err
	}
	var want, got []string
	for _, h := range spec.Hosts() {
		if h.IsTPU() {
			want = append(want, h.Name+" "+h.PodType)
		}
	}
	for _, n := range driver.nodes {
		if n.Slice != "" {
			got = append(got, n.Slice+"-w"+n.Worker+" "+n.PodType)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("Ray's TPU hosts %v differ from the simulator's %v", got, want)
	}
	if len(driver.nodes) != len(spec.Hosts()) {
		return fmt.Errorf("Ray has %d nodes, the simulator %d hosts", len(driver.nodes), len(spec.Hosts()))
	}
	return nil
}

func (s step) sliceSpec() placement.SliceSpec {
	return placement.SliceSpec{
		Topology:               s.Topology,
		Accelerator:            s.Accelerator,
		ResourcesPerBundle:     s.ResourcesPerBundle,
		NumSlices:              s.NumSlices,
		PGPerSlice:             s.PGPerSlice,
		Strategy:               placement.Strategy(s.Strategy),
		Name:                   s.Name,
		BundleLabelSelector:    s.BundleLabelSelector,
		HeadReservationTimeout: time.Duration(s.HeadTimeoutS * float64(time.Second)),
	}
}

// runSim runs a case on a fresh simulated cluster.
func runSim(c xcase) (outcome, error) {
	spec, err := sim.ParseSpec(simSpec)
	if err != nil {
		return nil, err
	}
	cl, err := sim.NewCluster(spec)
	if err != nil {
		return nil, err
	}
	whereOf := func(node string) *where {
		h, ok := cl.Host(node)
		if !ok {
			return &where{Slice: "?" + node}
		}
		if !h.IsTPU() {
			return &where{}
		}
		return &where{Slice: h.SliceName, Worker: strconv.Itoa(h.WorkerID), PodType: h.PodType}
	}
	var out outcome
	for i, s := range c.steps {
		var sp *sim.SlicePlacement
		switch s.Kind {
		case "slice":
			g, err := s.sliceSpec().Compile(nil)
			if err != nil {
				return nil, fmt.Errorf("step %d: compile: %w", i, err)
			}
			sp, err = cl.PlaceSlices(g)
			var re *sim.ReservationError
			if errors.As(err, &re) {
				out = append(out, stepOutcome{Error: re.Type, Msg: re.Message})
				continue
			} else if err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
		case "raw":
			sp, err = cl.PlaceBundles(sim.PlacementGroupRequest{
				Name:                s.Name,
				Strategy:            placement.Strategy(s.Strategy),
				Bundles:             s.Bundles,
				BundleLabelSelector: s.BundleLabelSelector,
			})
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
		default:
			return nil, fmt.Errorf("step %d: kind %q", i, s.Kind)
		}
		so := stepOutcome{}
		for _, h := range sp.Heads {
			so.Heads = append(so.Heads, h.SliceName)
		}
		for gi, g := range sp.Groups {
			gout := groupOutcome{State: string(g.State), Detail: g.Reason}
			for _, b := range sp.Bundles {
				if b.Group != gi {
					continue
				}
				for len(gout.Bundles) <= b.Index {
					gout.Bundles = append(gout.Bundles, nil)
				}
				if b.State == sim.StateCreated && b.Node != "" {
					gout.Bundles[b.Index] = whereOf(b.Node)
				}
			}
			so.Groups = append(so.Groups, gout)
		}
		out = append(out, so)
	}
	return out, nil
}

// runRay runs a case on the real cluster through the driver.
func runRay(c xcase) (outcome, float64, error) {
	req := rayCase{ID: c.name, Steps: c.steps, ReadyTimeoutS: 60, SettleS: 3}
	timeout := 2 * time.Minute
	for _, s := range c.steps {
		timeout += time.Duration(req.ReadyTimeoutS+s.HeadTimeoutS*float64(max(s.NumSlices, 1))) * time.Second
	}
	ans, err := driver.run(req, timeout)
	if err != nil {
		return nil, 0, err
	}
	if ans.Error != "" {
		return nil, ans.Seconds, fmt.Errorf("driver: %s", ans.Error)
	}
	if len(ans.CleanupErrors) > 0 {
		return nil, ans.Seconds, fmt.Errorf("driver cleanup: %s", strings.Join(ans.CleanupErrors, "; "))
	}
	var out outcome
	for _, s := range ans.Steps {
		so := stepOutcome{}
		if s.Error != nil {
			so.Error, so.Msg = s.Error.Type, s.Error.Message
			out = append(out, so)
			continue
		}
		for _, h := range s.Heads {
			if h != nil {
				so.Heads = append(so.Heads, h.Slice)
			}
		}
		for _, g := range s.Groups {
			gout := groupOutcome{State: g.State, Detail: g.RayState + "/" + g.SchedulingState}
			for _, b := range g.Bundles {
				if b == nil {
					gout.Bundles = append(gout.Bundles, nil)
					continue
				}
				gout.Bundles = append(gout.Bundles, &where{Slice: b.Slice, Worker: b.Worker, PodType: b.PodType})
			}
			so.Groups = append(so.Groups, gout)
		}
		out = append(out, so)
	}
	if len(out) != len(c.steps) {
		return nil, ans.Seconds, fmt.Errorf("driver answered %d steps, want %d", len(out), len(c.steps))
	}
	return out, ans.Seconds, nil
}

// statusOf renders the outcome of every step: "err:<exception>" or the
// states of its groups, comma-separated; steps are separated by "; ".
func statusOf(o outcome) string {
	parts := make([]string, len(o))
	for i, s := range o {
		if s.Error != "" {
			parts[i] = "err:" + s.Error
			continue
		}
		states := make([]string, len(s.Groups))
		for j, g := range s.Groups {
			states[j] = g.State
		}
		parts[i] = strings.Join(states, ",")
	}
	return strings.Join(parts, "; ")
}

// placed lists every placed bundle of the case in order.
func placed(o outcome) []*where {
	var out []*where
	for _, s := range o {
		for _, g := range s.Groups {
			for _, b := range g.Bundles {
				if b != nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// landing renders where the bundles landed at the level m compares.
func landing(o outcome, c xcase) string {
	m, names := c.mode, c.names
	all := placed(o)
	if len(all) == 0 {
		return "nothing placed"
	}
	// Slice labels: the name, or S<i> by first appearance.
	label := map[string]string{}
	sliceLabel := func(w *where) string {
		if w.Slice == "" {
			return "head"
		}
		if names {
			return w.Slice
		}
		l, ok := label[w.Slice]
		if !ok {
			l = "S" + strconv.Itoa(len(label)+1) + "(" + w.PodType + ")"
			label[w.Slice] = l
		}
		return l
	}
	for _, w := range all {
		sliceLabel(w)
	}
	perHost := map[string]int{}
	hostOf := map[string]*where{}
	for _, w := range all {
		perHost[w.host()]++
		hostOf[w.host()] = w
	}
	switch m {
	case modeExact:
		var steps []string
		for _, s := range o {
			var groups []string
			for _, g := range s.Groups {
				hosts := make([]string, len(g.Bundles))
				for i, b := range g.Bundles {
					hosts[i] = "-"
					if b != nil {
						hosts[i] = b.host()
					}
				}
				groups = append(groups, "["+strings.Join(hosts, " ")+"]")
			}
			steps = append(steps, strings.Join(groups, " "))
		}
		return strings.Join(steps, "; ")
	case modeHosts:
		var hosts []string
		for h, n := range perHost {
			key := hostOf[h].PodType
			if hostOf[h].Slice == "" {
				key = "head"
			}
			if names {
				key = h
			}
			hosts = append(hosts, key+"×"+strconv.Itoa(n))
		}
		slices.Sort(hosts)
		return "hosts: " + strings.Join(hosts, " ")
	case modeCount:
		counts := slices.Collect(maps.Values(perHost))
		slices.SortFunc(counts, func(a, b int) int { return cmp.Compare(b, a) })
		if !c.spans {
			return fmt.Sprintf("bundles per host %v", counts)
		}
		sl := map[string]bool{}
		for _, w := range all {
			sl[w.Slice] = true
		}
		return fmt.Sprintf("bundles per host %v, spans slices: %v", counts, len(sl) > 1)
	default: // modeSlices
		var steps []string
		for _, s := range o {
			var groups []string
			for _, g := range s.Groups {
				ls := make([]string, len(g.Bundles))
				for i, b := range g.Bundles {
					ls[i] = "-"
					if b != nil {
						ls[i] = sliceLabel(b)
					}
				}
				groups = append(groups, "["+strings.Join(ls, " ")+"]")
			}
			steps = append(steps, strings.Join(groups, " "))
		}
		bySlice := map[string][]int{}
		for h, n := range perHost {
			l := sliceLabel(hostOf[h])
			bySlice[l] = append(bySlice[l], n)
		}
		var per []string
		for _, l := range slices.Sorted(maps.Keys(bySlice)) {
			ns := bySlice[l]
			slices.SortFunc(ns, func(a, b int) int { return cmp.Compare(b, a) })
			per = append(per, fmt.Sprintf("%s%v", l, ns))
		}
		return strings.Join(steps, "; ") + " | per host: " + strings.Join(per, " ")
	}
}

// detail renders an outcome with real host names, for messages.
func detail(o outcome) string {
	var parts []string
	for i, s := range o {
		p := fmt.Sprintf("step %d: ", i)
		if s.Error != "" {
			msg := s.Msg
			if len(msg) > 160 {
				msg = msg[:160] + "..."
			}
			parts = append(parts, p+s.Error+" ("+msg+")")
			continue
		}
		if len(s.Heads) > 0 {
			p += "heads " + strings.Join(s.Heads, ",") + " "
		}
		var gs []string
		for _, g := range s.Groups {
			hosts := make([]string, len(g.Bundles))
			for j, b := range g.Bundles {
				hosts[j] = "-"
				if b != nil {
					hosts[j] = b.host()
				}
			}
			d := g.State
			if g.Detail != "" && g.State != "CREATED" {
				d += " (" + g.Detail + ")"
			}
			gs = append(gs, d+" ["+strings.Join(hosts, " ")+"]")
		}
		parts = append(parts, p+strings.Join(gs, " "))
	}
	return strings.Join(parts, "; ")
}

// describeSteps renders a case's requests for a disagreement report.
func describeSteps(steps []step) string {
	var parts []string
	for _, s := range steps {
		var b strings.Builder
		if s.Kind == "slice" {
			fmt.Fprintf(&b, "slice_placement_group(%q, %q", s.Topology, s.Accelerator)
			if s.ResourcesPerBundle != nil {
				fmt.Fprintf(&b, ", resources_per_bundle=%s", js(s.ResourcesPerBundle))
			}
			if s.NumSlices > 1 {
				fmt.Fprintf(&b, ", num_slices=%d", s.NumSlices)
			}
			if s.PGPerSlice {
				b.WriteString(", pg_per_slice=True")
			}
			if s.Strategy != "" {
				fmt.Fprintf(&b, ", strategy=%q", s.Strategy)
			}
			if s.BundleLabelSelector != nil {
				fmt.Fprintf(&b, ", bundle_label_selector=%s", js(s.BundleLabelSelector))
			}
			fmt.Fprintf(&b, ", head_reservation_timeout_s=%g)", s.HeadTimeoutS)
		} else {
			fmt.Fprintf(&b, "placement_group(%s, strategy=%q", js(s.Bundles), s.Strategy)
			if s.BundleLabelSelector != nil {
				fmt.Fprintf(&b, ", bundle_label_selector=%s", js(s.BundleLabelSelector))
			}
			b.WriteString(")")
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " then ")
}

// js renders v as JSON (map keys sorted), which reads as Python literals.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
