package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// State is a placement group's state.
type State string

// Placement group states. Ray reports an infeasible group as state PENDING
// with scheduling state INFEASIBLE; the simulator names it directly.
const (
	// StateCreated: every bundle is placed and holds its resources.
	StateCreated State = "CREATED"
	// StatePending: the bundles fit on the cluster when idle, but not on
	// the resources free now; the group is retried, in creation order,
	// whenever a group is removed.
	StatePending State = "PENDING"
	// StateInfeasible: the bundles do not fit even on an idle cluster.
	StateInfeasible State = "INFEASIBLE"
	// StateRemoved: removed; its resources are free again.
	StateRemoved State = "REMOVED"
)

// PlacementGroupRequest mirrors ray.util.placement_group's arguments.
type PlacementGroupRequest struct {
	// Name of the group. Optional. Default: "" (unnamed).
	Name string `json:"name,omitempty"`
	// Strategy: PACK, SPREAD, STRICT_PACK or STRICT_SPREAD. Optional.
	// Default: PACK, as in Ray.
	Strategy placement.Strategy `json:"strategy,omitempty"`
	// Bundles are the resource sets to reserve, each on one node.
	// Required: at least one bundle, each with a positive amount.
	Bundles []map[string]float64 `json:"bundles"`
	// BundleLabelSelector gives one label selector per bundle, in Ray's
	// syntax: "v", "!v", "in(a,b)", "!in(a,b)" (placement.LabelSelector).
	// Optional; when set, one entry per bundle.
	BundleLabelSelector []map[string]string `json:"bundleLabelSelector,omitempty"`
}

// PlacementGroup is a snapshot of a placement group.
type PlacementGroup struct {
	// ID is pg-<n>, numbered in creation order from 1.
	ID       string             `json:"id"`
	Name     string             `json:"name,omitempty"`
	Strategy placement.Strategy `json:"strategy"`
	State    State              `json:"state"`
	// Reason says why a group is PENDING or INFEASIBLE.
	Reason  string        `json:"reason,omitempty"`
	Bundles []BundleState `json:"bundles"`
}

// BundleState is one bundle of a placement group and where it sits.
type BundleState struct {
	Index         int                `json:"index"`
	Resources     map[string]float64 `json:"resources"`
	LabelSelector map[string]string  `json:"labelSelector,omitempty"`
	// Node is the host holding the bundle ("" while not placed).
	Node string `json:"node,omitempty"`
	// Slice is the node's slice ("" for a CPU-only node or while not placed).
	Slice string `json:"slice,omitempty"`
}

func (pg *PlacementGroup) placedBundles() []placedBundle {
	var out []placedBundle
	for _, b := range pg.Bundles {
		out = append(out, placedBundle{group: pg.ID, name: pg.Name, index: b.Index, node: b.Node, tpu: b.Resources[rayvocab.ResourceTPU]})
	}
	return out
}

// Placement is what RenderSVG draws and Cluster.Release frees: a
// *PlacementGroup, a *SlicePlacement or a *Result.
type Placement interface {
	placedBundles() []placedBundle
}

// placedBundle is one bundle as drawn; node is "" when it is not placed.
type placedBundle struct {
	group, name string
	index       int
	node        string
	tpu         float64
}

type group struct {
	seq      int
	id, name string
	strategy placement.Strategy
	bundles  []map[string]float64
	sels     []map[string]string
	reqs     []*request
	order    []int
	state    State
	reason   string
	nodes    []int32 // per bundle, when created
	// owner says what a group without a name of its own serves (a slice
	// head reservation), for the reasons that name what holds a node.
	owner string
}

// validate checks a request the way ray.util.placement_group does.
func (r PlacementGroupRequest) validate() field.ErrorList {
	var errs field.ErrorList
	if r.Strategy != "" && !slices.Contains(placement.Strategies(), string(r.Strategy)) {
		errs = append(errs, field.NotSupported(field.NewPath("strategy"), string(r.Strategy), placement.Strategies()))
	}
	bp := field.NewPath("bundles")
	if len(r.Bundles) == 0 {
		errs = append(errs, field.Required(bp, "at least one bundle, e.g. {\"CPU\": 1}"))
	}
	for i, b := range r.Bundles {
		nonzero := false
		for _, k := range sortedKeys(b) {
			v := b[k]
			switch {
			case k == "":
				errs = append(errs, field.Invalid(bp.Index(i), k, "a resource name may not be empty"))
			case math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxAmount:
				errs = append(errs, field.Invalid(bp.Index(i).Key(k), v, fmt.Sprintf("must be between 0 and %g", maxAmount)))
			case toFixed(v) != 0:
				nonzero = true
			}
		}
		if !nonzero {
			errs = append(errs, field.Invalid(bp.Index(i), formatResources(b), "a bundle needs a positive amount of some resource"))
		}
	}
	sp := field.NewPath("bundleLabelSelector")
	if n := len(r.BundleLabelSelector); n > 0 && n != len(r.Bundles) {
		errs = append(errs, field.Invalid(sp, n, fmt.Sprintf("has %d entries; it must have one per bundle (%d)", n, len(r.Bundles))))
	}
	for i, sel := range r.BundleLabelSelector {
		errs = append(errs, placement.ValidateLabelSelector(sp.Index(i), sel)...)
	}
	return errs
}

// CreatePlacementGroup creates a placement group. Placement is atomic:
// every bundle is placed (CREATED) or none is, and the group stays PENDING
// with the reason, or is INFEASIBLE by Ray's rule (a bundle no node can
// hold, STRICT_PACK bundles no single node can hold, STRICT_SPREAD with more
// bundles than nodes). Groups already placed keep their resources. Invalid
// requests are a field.ErrorList (paths strategy, bundles[i][RES],
// bundleLabelSelector[i][KEY]).
func (c *Cluster) CreatePlacementGroup(req PlacementGroupRequest) (*PlacementGroup, error) {
	if err := c.usable("CreatePlacementGroup"); err != nil {
		return nil, err
	}
	if errs := req.validate(); len(errs) > 0 {
		return nil, errs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshot(c.create(req)), nil
}

// create makes and schedules the group of a validated request; c.mu is held.
func (c *Cluster) create(req PlacementGroupRequest) *group {
	g := c.newGroup(req)
	c.schedule(g)
	return g
}

func (c *Cluster) newGroup(req PlacementGroupRequest) *group {
	c.seq++
	g := &group{
		seq:      c.seq,
		id:       "pg-" + strconv.Itoa(c.seq),
		name:     req.Name,
		strategy: req.Strategy,
		bundles:  make([]map[string]float64, len(req.Bundles)),
		sels:     make([]map[string]string, len(req.Bundles)),
		reqs:     make([]*request, len(req.Bundles)),
	}
	if g.strategy == "" {
		g.strategy = placement.Pack
	}
	for i, b := range req.Bundles {
		g.bundles[i] = maps.Clone(b)
		if i < len(req.BundleLabelSelector) && len(req.BundleLabelSelector[i]) > 0 {
			g.sels[i] = maps.Clone(req.BundleLabelSelector[i])
		}
		g.reqs[i] = c.newRequest(g.bundles[i], g.sels[i])
	}
	g.order = bundleOrder(g.bundles)
	c.groups[g.id] = g
	return g
}

// schedule tries to place g now and sets its state.
func (c *Cluster) schedule(g *group) {
	a := c.newAttempt(false)
	nodes, failed, ok := a.run(g.strategy, g.reqs, g.order)
	wasPending := g.state == StatePending
	if ok {
		a.commit()
		g.state, g.reason, g.nodes = StateCreated, "", nodes
		if wasPending {
			c.pending = slices.DeleteFunc(c.pending, func(p *group) bool { return p == g })
		}
		return
	}
	if reason, infeasible := c.rayInfeasible(g); infeasible {
		g.state, g.reason = StateInfeasible, reason
		return
	}
	// Ray leaves every other group PENDING (scheduling state
	// NO_RESOURCES) and waits, even one that could never fit this cluster;
	// the reason says which.
	g.state, g.reason = StatePending, c.pendingReason(g, failed)
	capa := c.newAttempt(true)
	if _, cfailed, cok := capa.run(g.strategy, g.reqs, g.order); !cok {
		g.reason = c.infeasibleReason(g, cfailed) + " (Ray keeps the group PENDING)"
	}
	if !wasPending {
		c.pending = append(c.pending, g)
	}
}

// rayInfeasible applies Ray 2.60's rule for an INFEASIBLE placement group
// (bundle_scheduling_policy.cc): a bundle that no node could ever hold,
// STRICT_PACK bundles that no single node could ever hold together, or
// STRICT_SPREAD with more bundles than the cluster has nodes. Resources
// held by other groups do not count: such a group is PENDING.
func (c *Cluster) rayInfeasible(g *group) (string, bool) {
	for i, r := range g.reqs {
		if c.countFits(r) == 0 {
			return c.infeasibleReason(g, i), true
		}
	}
	switch g.strategy {
	case placement.StrictPack:
		if c.countFits(c.aggregate(g.reqs)) == 0 {
			return c.infeasibleReason(g, -1), true
		}
	case placement.StrictSpread:
		if n := len(c.nodes); len(g.reqs) > n {
			return fmt.Sprintf("STRICT_SPREAD needs a node per bundle: %d bundles, and the cluster has %s", len(g.reqs), plural(n, "node")), true
		}
	}
	return "", false
}

// RemovePlacementGroup removes a group, frees what it holds, and retries
// the pending groups in creation order. Removing a removed group is a
// no-op, as in Ray; an unknown id is an error matching backend.ErrNotFound.
func (c *Cluster) RemovePlacementGroup(id string) error {
	if err := c.usable("RemovePlacementGroup"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remove(id)
}

func (c *Cluster) remove(id string) error {
	g, ok := c.groups[id]
	if !ok {
		// Ids are pg-1, pg-2, ...: a known id missing from the map was removed.
		if n, err := strconv.Atoi(strings.TrimPrefix(id, "pg-")); err == nil && n >= 1 && n <= c.seq && "pg-"+strconv.Itoa(n) == id {
			return nil
		}
		return fmt.Errorf("placement group %q: %w", id, backend.ErrNotFound)
	}
	freed := g.state == StateCreated
	if freed {
		for i, ni := range g.nodes {
			c.release(ni, g.reqs[i])
		}
	}
	if g.state == StatePending {
		c.pending = slices.DeleteFunc(c.pending, func(p *group) bool { return p == g })
	}
	g.state, g.reason, g.nodes = StateRemoved, "", nil
	delete(c.groups, id)
	if freed {
		for _, p := range slices.Clone(c.pending) {
			c.schedule(p)
		}
	}
	return nil
}

// PlacementGroup returns a snapshot of a live group (removed groups are
// forgotten).
func (c *Cluster) PlacementGroup(id string) (*PlacementGroup, bool) {
	if !c.ok() {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[id]
	if !ok {
		return nil, false
	}
	return c.snapshot(g), true
}

// PlacementGroups returns a snapshot of every live group, in creation order.
func (c *Cluster) PlacementGroups() []*PlacementGroup {
	if !c.ok() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	gs := slices.Collect(maps.Values(c.groups))
	slices.SortFunc(gs, func(a, b *group) int { return a.seq - b.seq })
	out := make([]*PlacementGroup, len(gs))
	for i, g := range gs {
		out[i] = c.snapshot(g)
	}
	return out
}

func (c *Cluster) snapshot(g *group) *PlacementGroup {
	pg := &PlacementGroup{ID: g.id, Name: g.name, Strategy: g.strategy, State: g.state, Reason: g.reason,
		Bundles: make([]BundleState, len(g.bundles))}
	for i := range g.bundles {
		b := BundleState{Index: i, Resources: maps.Clone(g.bundles[i]), LabelSelector: maps.Clone(g.sels[i])}
		if g.state == StateCreated {
			ni := g.nodes[i]
			b.Node = c.nodeName(ni)
			if s := c.nodes[ni].slice; s >= 0 {
				b.Slice = c.slices[s].name
			}
		}
		pg.Bundles[i] = b
	}
	return pg
}
