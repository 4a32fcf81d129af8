package sim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// ErrSliceReservation matches every *ReservationError with errors.Is.
var ErrSliceReservation = errors.New("failed to reserve TPU slice")

// ReservationError is the exception Ray's SlicePlacementGroup raises when
// a slice head cannot be reserved. Every group made for the slice group so
// far has been removed, as Ray's shutdown() does.
type ReservationError struct {
	// Type is the Python exception: TimeoutError (head_reservation_timeout_s
	// ran out), or Blocked when the timeout is 0 and Ray would wait forever.
	Type string `json:"type"`
	// Slice is the slice index whose head could not be reserved.
	Slice   int    `json:"slice"`
	PodType string `json:"podType"`
	Message string `json:"message"`
}

func (e *ReservationError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Type + ": " + e.Message
}

// Is reports whether target is ErrSliceReservation.
func (e *ReservationError) Is(target error) bool { return target == ErrSliceReservation }

// SlicePlacement is where a compiled slice group, or a raw placement group
// request, landed on the cluster, with a diagnosis of the result.
type SlicePlacement struct {
	// Name is the placement group name ("" for an unnamed group).
	Name string `json:"name,omitempty"`
	// PodType, Topology and NumSlices are the requested shape; empty for
	// a raw request (PlaceBundles).
	PodType   string `json:"podType,omitempty"`
	Topology  string `json:"topology,omitempty"`
	NumSlices int    `json:"numSlices,omitempty"`
	// Heads are the head reservations, one per multi-host slice whose name
	// the request did not fix.
	Heads []HeadPlacement `json:"heads,omitempty"`
	// Groups are the worker placement groups as they stand after the call
	// (REMOVED after a failed head reservation); Bundles says where each
	// bundle is.
	Groups []GroupRef `json:"groups"`
	// Bundles are every worker bundle, slice by slice.
	Bundles []BundlePlacement `json:"bundles"`
	// Error is set when a head could not be reserved.
	Error     *ReservationError   `json:"error,omitempty"`
	Diagnosis placement.Diagnosis `json:"diagnosis"`

	heads []string // head group ids still held
}

// HeadPlacement is one head reservation: a placement group of one bundle
// {TPU-<pod type>-head: 1} with the selector {ray.io/tpu-worker-id: "0",
// ray.io/tpu-pod-type: <pod type>}.
type HeadPlacement struct {
	Slice int    `json:"slice"`
	Group string `json:"group"`
	State State  `json:"state"`
	// Node is worker 0 of the reserved slice and SliceName its TPU_NAME,
	// which pins the slice's worker bundles.
	Node      string `json:"node,omitempty"`
	SliceName string `json:"sliceName,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// BundlePlacement is one worker bundle and where it landed.
type BundlePlacement struct {
	// Group indexes SlicePlacement.Groups; Index is the bundle's index in
	// that group; Slice the requested slice it belongs to (0 for a raw
	// request).
	Group int `json:"group"`
	Index int `json:"index"`
	Slice int `json:"slice"`
	// Resources and LabelSelector are as submitted to Ray, the selector
	// with the slice-name pin read from the head.
	Resources     map[string]float64 `json:"resources"`
	LabelSelector map[string]string  `json:"labelSelector,omitempty"`
	State         State              `json:"state"`
	// Node, SliceName and PodType describe the host the bundle landed on.
	Node      string `json:"node,omitempty"`
	SliceName string `json:"sliceName,omitempty"`
	PodType   string `json:"podType,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// GroupRef names a placement group and its state.
type GroupRef struct {
	ID       string             `json:"id"`
	Name     string             `json:"name,omitempty"`
	Strategy placement.Strategy `json:"strategy"`
	State    State              `json:"state"`
	Reason   string             `json:"reason,omitempty"`
}

func refOf(g *group) GroupRef {
	return GroupRef{ID: g.id, Name: g.name, Strategy: g.strategy, State: g.state, Reason: g.reason}
}

func (sp *SlicePlacement) placedBundles() []placedBundle {
	if sp == nil {
		return nil
	}
	out := make([]placedBundle, 0, len(sp.Bundles))
	for _, b := range sp.Bundles {
		if b.Group >= len(sp.Groups) {
			continue
		}
		out = append(out, placedBundle{group: sp.Groups[b.Group].ID, name: sp.Groups[b.Group].Name, index: b.Index, node: b.Node, tpu: b.Resources[rayvocab.ResourceTPU]})
	}
	return out
}

// PlaceSlices reserves a compiled slice group exactly as Ray's
// SlicePlacementGroup does. For each slice in order: a multi-host slice
// whose name the request does not fix first reserves its head, a placement
// group of one bundle {TPU-<pod type>-head: 1} with the selector
// {ray.io/tpu-worker-id: "0", ray.io/tpu-pod-type: <pod type>}; the slice
// name of the node it lands on pins every worker bundle of that slice
// (label ray.io/tpu-slice-name). Single-host slices reserve no head and
// get no pin. A worker group is created as soon as the heads of all its
// slices are held: one group after the last slice, or one per slice with
// pg_per_slice.
//
// A head that cannot be placed now is Ray's TimeoutError after
// head_reservation_timeout_s: every group made so far is removed, and
// PlaceSlices returns the placement (bundles unplaced, Error set) together
// with that *ReservationError. Worker groups that are PENDING or
// INFEASIBLE are not errors: they are reported in the bundles and the
// diagnosis, as Ray would leave them waiting. Other errors mean the slice
// group itself is malformed.
func (c *Cluster) PlaceSlices(g *placement.SliceGroup) (*SlicePlacement, error) {
	if err := c.usable("PlaceSlices"); err != nil {
		return nil, err
	}
	if err := checkSliceGroup(g); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.placeSlices(g)
	if sp.Error != nil {
		return sp, sp.Error
	}
	return sp, nil
}

func checkSliceGroup(g *placement.SliceGroup) error {
	if g == nil {
		return errors.New("sim: nil slice group")
	}
	if len(g.Groups) == 0 {
		return errors.New("sim: slice group has no placement groups")
	}
	for i, grp := range g.Groups {
		if len(grp.Bundles) == 0 {
			return fmt.Errorf("sim: slice group: group %d has no bundles", i)
		}
		req := PlacementGroupRequest{Strategy: grp.Strategy}
		for _, b := range grp.Bundles {
			req.Bundles = append(req.Bundles, b.Resources)
			if b.Slice < 0 || b.Slice >= max(g.NumSlices, 1) {
				return fmt.Errorf("sim: slice group: group %d bundle %d belongs to slice %d of %d", i, b.Index, b.Slice, g.NumSlices)
			}
		}
		if errs := req.validate(); len(errs) > 0 {
			return fmt.Errorf("sim: slice group: group %d: %w", i, errs)
		}
	}
	return nil
}

func (c *Cluster) placeSlices(g *placement.SliceGroup) *SlicePlacement {
	sp := &SlicePlacement{PodType: g.PodType, Topology: g.Topology, NumSlices: g.NumSlices, Groups: []GroupRef{}, Bundles: []BundlePlacement{}}
	if len(g.Groups) > 0 {
		sp.Name = g.Groups[0].Name
	}
	numSlices := max(g.NumSlices, 1)
	heads := map[int]placement.HeadReservation{}
	for _, h := range g.Heads {
		heads[h.Slice] = h
	}
	lastSlice := make([]int, len(g.Groups))
	for i, grp := range g.Groups {
		for _, b := range grp.Bundles {
			lastSlice[i] = max(lastSlice[i], b.Slice)
		}
	}
	pinned := map[int]string{}
	var created []*group
	groupOf := make([]*group, len(g.Groups))
	for si := range numSlices {
		if h, ok := heads[si]; ok {
			hg := c.newGroup(PlacementGroupRequest{
				Strategy:            placement.Pack,
				Bundles:             []map[string]float64{h.Resources},
				BundleLabelSelector: []map[string]string{h.LabelSelector},
			})
			hg.owner = fmt.Sprintf("head reservation of slice %d", si)
			if g.Part != (placement.Part{}) {
				hg.owner += " of " + g.Part.String()
			} else if len(g.Groups) > 0 && g.Groups[0].Name != "" {
				hg.owner += " for " + g.Groups[0].Name
			}
			c.schedule(hg)
			hp := HeadPlacement{Slice: si, Group: hg.id, State: hg.state, Reason: hg.reason}
			if hg.state == StateCreated {
				ni := hg.nodes[0]
				hp.Node = c.nodeName(ni)
				hp.SliceName, _ = c.labelOf(ni, rayvocab.LabelTPUSliceName)
				pinned[si] = hp.SliceName
				sp.Heads = append(sp.Heads, hp)
				sp.heads = append(sp.heads, hg.id)
				if hp.SliceName == "" {
					sp.Error = &ReservationError{Type: "RuntimeError", Slice: si, PodType: g.PodType,
						Message: "Failed to retrieve TPU slice name after reserving head placement group. Ensure that TPU slice metadata is available and correctly configured on multi-host nodes."}
				}
			} else {
				_ = c.remove(hg.id)
				hp.State = StateRemoved
				sp.Heads = append(sp.Heads, hp)
				sp.Error = headError(g, si, h, hp.Reason)
			}
			if sp.Error != nil {
				for _, wg := range created {
					_ = c.remove(wg.id)
				}
				for _, id := range sp.heads {
					_ = c.remove(id)
				}
				sp.heads = nil
				for i := range sp.Heads {
					sp.Heads[i].State = StateRemoved
				}
				break
			}
		}
		for gi, grp := range g.Groups {
			if lastSlice[gi] != si {
				continue
			}
			req := PlacementGroupRequest{Name: grp.Name, Strategy: grp.Strategy}
			for _, b := range grp.Bundles {
				req.Bundles = append(req.Bundles, b.Resources)
				req.BundleLabelSelector = append(req.BundleLabelSelector, selectorWithPin(b, pinned))
			}
			wg := c.newGroup(req)
			c.schedule(wg)
			groupOf[gi] = wg
			created = append(created, wg)
		}
	}
	for gi, grp := range g.Groups {
		wg := groupOf[gi]
		if wg != nil {
			sp.Groups = append(sp.Groups, refOf(wg))
		}
		for bi, b := range grp.Bundles {
			bp := BundlePlacement{Group: gi, Index: bi, Slice: b.Slice, Resources: maps.Clone(b.Resources), State: StateRemoved}
			switch {
			case wg == nil:
				bp.LabelSelector = selectorWithPin(b, pinned)
				bp.Reason = fmt.Sprintf("not created: the head of slice %d was not reserved", sp.Error.Slice)
			case sp.Error != nil:
				c.fillBundle(&bp, wg, bi)
				bp.Reason = fmt.Sprintf("removed: the head of slice %d was not reserved", sp.Error.Slice)
			default:
				c.fillBundle(&bp, wg, bi)
			}
			sp.Bundles = append(sp.Bundles, bp)
		}
	}
	sp.Diagnosis = c.diagnoseSlices(sp, g)
	if sp.Diagnosis == nil {
		sp.Diagnosis = placement.Diagnosis{}
	}
	return sp
}

// selectorWithPin is the bundle's selector as Ray submits it: the user's,
// with ray.io/tpu-slice-name set to the reserved slice's name.
func selectorWithPin(b placement.Bundle, pinned map[int]string) map[string]string {
	sel := maps.Clone(b.LabelSelector)
	if name, ok := pinned[b.Slice]; ok && b.SliceNameFromHead {
		if sel == nil {
			sel = map[string]string{}
		}
		sel[rayvocab.LabelTPUSliceName] = name
	}
	if len(sel) == 0 {
		return nil
	}
	return sel
}

func (c *Cluster) fillBundle(bp *BundlePlacement, g *group, i int) {
	bp.LabelSelector = maps.Clone(g.sels[i])
	bp.State = g.state
	switch g.state {
	case StateCreated:
		ni := g.nodes[i]
		bp.Node = c.nodeName(ni)
		if s := c.nodes[ni].slice; s >= 0 {
			bp.SliceName = c.slices[s].name
			bp.PodType = c.slices[s].item.item.PodType
		}
	case StatePending, StateInfeasible:
		bp.Reason = g.reason
	}
}

func headError(g *placement.SliceGroup, si int, h placement.HeadReservation, reason string) *ReservationError {
	// Ray's order: worker id, pod type, then the rest.
	keys := sortedKeys(h.LabelSelector)
	rank := func(k string) int {
		switch k {
		case rayvocab.LabelTPUWorkerID:
			return 0
		case rayvocab.LabelTPUPodType:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	sel := make([]string, 0, len(h.LabelSelector))
	for _, k := range keys {
		sel = append(sel, fmt.Sprintf("'%s': '%s'", k, h.LabelSelector[k]))
	}
	labels := "{" + strings.Join(sel, ", ") + "}"
	if g.HeadReservationTimeoutSeconds <= 0 {
		return &ReservationError{Type: "Blocked", Slice: si, PodType: g.PodType, Message: fmt.Sprintf(
			"head_reservation_timeout_s is None, so reserving the TPU head for slice %d with shape: %s would wait forever. Requesting TPU head node with labels: %s. Simulator: %s",
			si, g.PodType, labels, reason)}
	}
	return &ReservationError{Type: "TimeoutError", Slice: si, PodType: g.PodType, Message: fmt.Sprintf(
		"Failed to reserve TPU head for slice with shape: %s after %s seconds. Ensure your cluster has sufficient resources. Requesting TPU head node with labels: %s. Simulator: %s",
		g.PodType, pyFloat(g.HeadReservationTimeoutSeconds), labels, reason)}
}

// pyFloat renders a float as Python's str does for the values used here.
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// PlaceBundles creates a raw placement group, as a caller that asks Ray for
// bundles directly would (no head reservation, no slice pin), and reports
// where the bundles landed with the same diagnosis as PlaceSlices: 16
// bundles of {TPU: 1} without a topology can spread over several slices.
func (c *Cluster) PlaceBundles(req PlacementGroupRequest) (*SlicePlacement, error) {
	if err := c.usable("PlaceBundles"); err != nil {
		return nil, err
	}
	if errs := req.validate(); len(errs) > 0 {
		return nil, errs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.create(req)
	sp := &SlicePlacement{Name: req.Name, Groups: []GroupRef{refOf(g)}}
	for i := range g.bundles {
		bp := BundlePlacement{Index: i, Resources: maps.Clone(g.bundles[i])}
		c.fillBundle(&bp, g, i)
		sp.Bundles = append(sp.Bundles, bp)
	}
	sp.Diagnosis = c.diagnoseRaw(sp)
	if sp.Diagnosis == nil {
		sp.Diagnosis = placement.Diagnosis{}
	}
	return sp, nil
}

// Release removes every group a placement holds (worker groups and head
// reservations), as SlicePlacementGroup.shutdown() does, and retries the
// pending groups. p is a *SlicePlacement (from PlaceSlices or
// PlaceBundles), a *PlacementGroup, or a whole *Result of Place, whose
// every slice group it releases in one call: after c.Release(res), a Run of the same plan finds
// the slices free again. A nil p, and a placement already released, are no
// error.
func (c *Cluster) Release(p Placement) error {
	if err := c.usable("Release"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch p := p.(type) {
	case *SlicePlacement:
		return c.releaseSlices(p)
	case *PlacementGroup:
		if p == nil {
			return nil
		}
		if err := c.remove(p.ID); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return err
		}
	case *Result:
		if p == nil {
			return nil
		}
		for _, sp := range p.Slices {
			if err := c.releaseSlices(sp); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseSlices releases one slice placement; c.mu is held.
func (c *Cluster) releaseSlices(sp *SlicePlacement) error {
	if sp == nil {
		return nil
	}
	ids := make([]string, 0, len(sp.Groups)+len(sp.heads))
	for _, g := range sp.Groups {
		ids = append(ids, g.ID)
	}
	ids = append(ids, sp.heads...)
	for _, id := range ids {
		if err := c.remove(id); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return err
		}
	}
	sp.heads = nil
	return nil
}
