package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
)

// HostLoss is what losing one TPU host does to a placed plan, modelled on
// what Ray Train 2.60 does (measured on a local cluster posing as TPU
// hosts; see examples/jaxtrain/hostloss_test.go):
//
//   - the dead host's bundles die with it, the worker group fails, and Ray
//     Train removes the group's placement groups and head reservations
//     (with max_failures >= 1; otherwise the run ends here);
//   - the host is gone for good: its resources, its slice's name resource
//     and, if it was worker 0, the slice's head resource;
//   - Ray Train starts the group again: it reserves a slice head for each
//     slice, then pins the slice's bundles to that slice. A broken slice
//     whose worker 0 survives still offers its head, so the reservation
//     may land there; the bundles then wait for the missing host until the
//     worker group start timeout, a controller failure, and Ray Train tries
//     again. Ray picks among free heads arbitrarily and may land on the
//     broken head more than once, or never; the model, deterministic,
//     takes heads in host order, counts each broken head once
//     (StartTimeouts) and then takes the next. (On the local cluster Ray
//     reserved the intact head directly in six host-loss runs out of
//     six, and the broken one in all four elastic runs: StartTimeouts is the
//     model's order, not a prediction of Ray's.);
//   - when too few intact slices are left, no start succeeds: Ray Train
//     keeps trying until FailureConfig.controller_failure_limit runs out
//     (forever by default). Recovered is then false.
type HostLoss struct {
	// Host is the lost host's name (<slice>-w<worker id>).
	Host string `json:"host"`
	// Slice is its slice.
	Slice string `json:"slice"`
	// StartTimeouts counts the group starts that timed out because a head
	// reservation landed on a broken slice.
	StartTimeouts int `json:"startTimeouts"`
	// Recovered says whether the group found room again; After is its new
	// placement (the last attempt's, when it did not recover).
	Recovered bool    `json:"recovered"`
	After     *Result `json:"after"`
	// IntactSlices counts, per pod type of the plan's slice groups, the
	// slices with every host alive after the loss.
	IntactSlices map[string]int `json:"intactSlices"`
}

// LoseHost removes a TPU host from the cluster while plan p runs with the
// placement before (from Place), and places p again as Ray Train would
// restart it (see [HostLoss]). It releases before; the new placement is
// released too, so that the cluster then holds only the loss: the host
// stays gone until [Cluster.ReviveHost].
func (c *Cluster) LoseHost(ctx context.Context, p *placement.Plan, before *Result, host string) (*HostLoss, error) {
	if err := c.usableCtx(ctx, "LoseHost"); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("sim: LoseHost: nil plan; pass the plan that runs (what Compile returns)")
	}
	h, ok := c.Host(host)
	if !ok || !h.IsTPU() {
		return nil, fmt.Errorf("sim: LoseHost: no TPU host %q", host)
	}
	if before != nil {
		for _, sp := range before.Slices {
			if err := c.Release(sp); err != nil {
				return nil, err
			}
		}
	}
	if err := c.hold(lostGroupName(host), c.Available(host), h); err != nil {
		return nil, err
	}
	out := &HostLoss{Host: host, Slice: h.SliceName}
	var err error
	out.After, out.StartTimeouts, out.Recovered, err = c.restart(ctx, p)
	if err != nil {
		return nil, err
	}
	out.IntactSlices = c.intactByPodType(p)
	return out, nil
}

// restart places p again as Ray Train restarts a worker group after a
// loss (see [HostLoss]): a head reservation that lands on a broken slice
// times out and is held back, and the group tries again. It returns the
// last placement (released), the start timeouts and whether the group
// found room.
func (c *Cluster) restart(ctx context.Context, p *placement.Plan) (*Result, int, bool, error) {
	var held []string // broken heads held back between attempts
	defer func() {
		for _, id := range held {
			_ = c.RemovePlacementGroup(id)
		}
	}()
	timeouts := 0
	for {
		res, err := c.Place(ctx, p)
		if err != nil {
			return nil, 0, false, err
		}
		broken := c.brokenHeads(res)
		for _, sp := range res.Slices {
			if err := c.Release(sp); err != nil {
				return nil, 0, false, err
			}
		}
		if len(broken) == 0 {
			return res, timeouts, !res.Diagnosis.HasErrors() && allCreated(res), nil
		}
		timeouts++
		for _, name := range broken {
			hh, _ := c.Host(name)
			id, err := c.holdHead(hh)
			if err != nil {
				return nil, 0, false, err
			}
			held = append(held, id)
		}
	}
}

// intactByPodType counts the intact slices of each multi-host pod type of p.
func (c *Cluster) intactByPodType(p *placement.Plan) map[string]int {
	out := map[string]int{}
	for _, g := range p.Slices {
		if g.MultiHost {
			out[g.PodType] = c.intactSlices(g.PodType)
		}
	}
	return out
}

// ReviveHost brings back a host that LoseHost removed.
func (c *Cluster) ReviveHost(host string) error {
	if err := c.usable("ReviveHost"); err != nil {
		return err
	}
	for _, pg := range c.PlacementGroups() {
		if pg.Name == lostGroupName(host) {
			return c.RemovePlacementGroup(pg.ID)
		}
	}
	return fmt.Errorf("sim: ReviveHost: host %q was not lost", host)
}

func lostGroupName(host string) string { return "raytpu-lost-host:" + host }

// hold places a group of one bundle of res pinned to host h; it must fit.
func (c *Cluster) hold(name string, res map[string]float64, h Host) error {
	req := PlacementGroupRequest{
		Name: name, Strategy: placement.StrictPack,
		Bundles: []map[string]float64{res},
		BundleLabelSelector: []map[string]string{{
			rayvocab.LabelTPUSliceName: h.SliceName,
			rayvocab.LabelTPUWorkerID:  strconv.Itoa(h.WorkerID),
		}},
	}
	pg, err := c.CreatePlacementGroup(req)
	if err != nil {
		return err
	}
	if pg.State != StateCreated {
		_ = c.RemovePlacementGroup(pg.ID)
		return fmt.Errorf("sim: cannot take host %s: %s", h.Name, pg.Reason)
	}
	return nil
}

// holdHead reserves the head resource of h (worker 0 of a broken slice).
func (c *Cluster) holdHead(h Host) (string, error) {
	res := map[string]float64{rayvocab.HeadResource(h.PodType): 1}
	if err := c.hold("raytpu-broken-head:"+h.Name, res, h); err != nil {
		return "", err
	}
	for _, pg := range c.PlacementGroups() {
		if pg.Name == "raytpu-broken-head:"+h.Name {
			return pg.ID, nil
		}
	}
	return "", errors.New("sim: broken head hold vanished")
}

// brokenHeads lists the heads in res that were reserved on a slice with a
// lost host.
func (c *Cluster) brokenHeads(res *Result) []string {
	var out []string
	for _, sp := range res.Slices {
		for _, hd := range sp.Heads {
			if hd.SliceName != "" && c.sliceLost(hd.SliceName) {
				out = append(out, hd.Node)
			}
		}
	}
	return out
}

// sliceLost reports whether a host of the named slice was lost.
func (c *Cluster) sliceLost(slice string) bool {
	for _, pg := range c.PlacementGroups() {
		for _, b := range pg.Bundles {
			if b.Slice == slice && pg.Name == lostGroupName(b.Node) {
				return true
			}
		}
	}
	return false
}

// intactSlices counts the slices of a pod type with no lost host.
func (c *Cluster) intactSlices(podType string) int {
	n := 0
	seen := map[string]bool{}
	for _, h := range c.Spec().Hosts() {
		if h.PodType != podType || seen[h.SliceName] {
			continue
		}
		seen[h.SliceName] = true
		if !c.sliceLost(h.SliceName) {
			n++
		}
	}
	return n
}

func allCreated(res *Result) bool {
	for _, sp := range res.Slices {
		if sp.Error != nil {
			return false
		}
		for _, b := range sp.Bundles {
			if b.State != StateCreated {
				return false
			}
		}
	}
	return true
}
