package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/placement"
)

// SliceLoss is what losing a whole TPU slice does to a placed plan: every
// host of the slice at once, as when GKE reclaims the node pool of a spot
// or flex slice (each host's pods get SIGTERM with the same short grace
// period, then are gone). Modelled on what Ray Train 2.60 did on a KubeRay
// v1.5 cluster whose slice was preempted (see kuberay's
// TestFitTrainsOnKubeRayThroughAPodLoss):
//
//   - every bundle on the slice dies with it, the worker group fails, and
//     Ray Train removes the group's placement groups and head reservations
//     (with max_failures >= 1; otherwise the run ends here);
//   - the slice's head resource goes with its worker 0, so no head
//     reservation can land on it: unlike a lost host ([HostLoss]), a lost
//     slice causes no start timeout of its own;
//   - Ray Train starts the group again on the slices left: with a spare
//     slice of the pod type it recovers there; without one no start
//     succeeds (Recovered false), and Ray Train keeps trying until the
//     slice is back ([Cluster.ReviveSlice], KubeRay recreating the pods on
//     the recreated node pool, under the same slice name) or
//     FailureConfig.controller_failure_limit runs out.
type SliceLoss struct {
	// Slice is the lost slice's name, and Hosts its hosts
	// (<slice>-w<worker id>) in worker-id order.
	Slice string   `json:"slice"`
	Hosts []string `json:"hosts"`
	// StartTimeouts counts the group starts that timed out because a
	// head reservation landed on another, already broken slice.
	StartTimeouts int `json:"startTimeouts"`
	// Recovered says whether the group found room without the slice;
	// After is its new placement (the last attempt's, when it did not
	// recover).
	Recovered bool    `json:"recovered"`
	After     *Result `json:"after"`
	// IntactSlices counts, per pod type of the plan's multi-host slice
	// groups, the slices with every host alive after the loss.
	IntactSlices map[string]int `json:"intactSlices"`
}

// LoseSlice removes every host of TPU slice slice from the cluster while
// plan p runs with the placement before (from Place), and places p again
// as Ray Train would restart it (see [SliceLoss]). It releases before; the
// new placement is released too, so that the cluster then holds only the
// loss: the slice stays gone until [Cluster.ReviveSlice].
func (c *Cluster) LoseSlice(ctx context.Context, p *placement.Plan, before *Result, slice string) (*SliceLoss, error) {
	if err := c.usableCtx(ctx, "LoseSlice"); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("sim: LoseSlice: nil plan; pass the plan that runs (what Compile returns)")
	}
	hosts := c.sliceHosts(slice)
	if len(hosts) == 0 {
		return nil, fmt.Errorf("sim: LoseSlice: no TPU slice %q; pass a slice name such as %q", slice, c.firstSlice())
	}
	if before != nil {
		for _, sp := range before.Slices {
			if err := c.Release(sp); err != nil {
				return nil, err
			}
		}
	}
	out := &SliceLoss{Slice: slice}
	for _, h := range hosts {
		if c.lost(h.Name) {
			return nil, fmt.Errorf("sim: LoseSlice: host %s of slice %s is already lost; revive it first", h.Name, slice)
		}
	}
	for _, h := range hosts {
		if err := c.hold(lostGroupName(h.Name), c.Available(h.Name), h); err != nil {
			return nil, err
		}
		out.Hosts = append(out.Hosts, h.Name)
	}
	var err error
	out.After, out.StartTimeouts, out.Recovered, err = c.restart(ctx, p)
	if err != nil {
		return nil, err
	}
	out.IntactSlices = c.intactByPodType(p)
	return out, nil
}

// ReviveSlice brings back every host of a slice that LoseSlice (or
// LoseHost, host by host) removed, as a recreated node pool does.
func (c *Cluster) ReviveSlice(slice string) error {
	if err := c.usable("ReviveSlice"); err != nil {
		return err
	}
	revived := 0
	for _, h := range c.sliceHosts(slice) {
		for _, pg := range c.PlacementGroups() {
			if pg.Name == lostGroupName(h.Name) {
				if err := c.RemovePlacementGroup(pg.ID); err != nil {
					return err
				}
				revived++
			}
		}
	}
	if revived == 0 {
		return fmt.Errorf("sim: ReviveSlice: no host of slice %q was lost", slice)
	}
	return nil
}

// sliceHosts lists the TPU hosts of the named slice in worker-id order
// (the spec's host order).
func (c *Cluster) sliceHosts(slice string) []Host {
	var out []Host
	if slice == "" {
		return nil
	}
	for _, h := range c.Spec().Hosts() {
		if h.SliceName == slice {
			out = append(out, h)
		}
	}
	return out
}

// firstSlice names the cluster's first TPU slice, for an error's example.
func (c *Cluster) firstSlice() string {
	for _, h := range c.Spec().Hosts() {
		if h.SliceName != "" {
			return h.SliceName
		}
	}
	return "v6e-16-0"
}

// lost reports whether host was taken away by LoseHost or LoseSlice.
func (c *Cluster) lost(host string) bool {
	for _, pg := range c.PlacementGroups() {
		if pg.Name == lostGroupName(host) {
			return true
		}
	}
	return false
}
