package raycluster

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// HostLoss records one worker node taken down by LoseHost, as a TPU host
// disappears under maintenance or preemption: its raylet and every process
// on it die at once.
type HostLoss struct {
	// Name is the node's name ("slice-a/1"), NodeID its Ray node id and IP
	// its address.
	Name, NodeID, IP string
	// Killed is when the node's processes were killed; DeadAfter is how long
	// Ray's GCS then took to report the node DEAD (its health check).
	Killed    time.Time
	DeadAfter time.Duration
}

// LoseHost kills every process of the named worker node (KillNode) and
// waits until Ray reports the node DEAD, so that a test knows when Ray has
// noticed. The cluster keeps the node's slot: ReviveHost starts it again.
func (c *Cluster) LoseHost(ctx context.Context, name string) (HostLoss, error) {
	ip, ok := c.NodeIP(name)
	if !ok || name == "head" {
		return HostLoss{}, fmt.Errorf("raycluster: LoseHost: no worker node %q", name)
	}
	loss := HostLoss{Name: name, IP: ip}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return loss, err
	}
	for _, n := range nodes {
		if n.IP == ip && n.Alive() {
			loss.NodeID = n.NodeID
		}
	}
	if loss.NodeID == "" {
		return loss, fmt.Errorf("raycluster: LoseHost: node %q (%s) is not alive", name, ip)
	}
	loss.Killed = time.Now()
	if err := c.KillNode(name); err != nil {
		return loss, err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		nodes, err := c.Nodes(ctx)
		if err == nil {
			i := slices.IndexFunc(nodes, func(n NodeInfo) bool { return n.NodeID == loss.NodeID })
			if i >= 0 && !nodes[i].Alive() {
				loss.DeadAfter = time.Since(loss.Killed)
				c.logger.Info("ray node dead", "node", name, "node_id", loss.NodeID, "after", loss.DeadAfter)
				return loss, nil
			}
		}
		select {
		case <-ctx.Done():
			return loss, fmt.Errorf("raycluster: LoseHost: node %q killed but not reported DEAD: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// ReviveHost starts a worker node that LoseHost (or KillNode) took down
// again, with the same name, address, resources and environment, and waits
// until Ray reports it ALIVE. It returns the new node id.
func (c *Cluster) ReviveHost(ctx context.Context, name string) (string, error) {
	c.mu.Lock()
	i := slices.IndexFunc(c.procs, func(p *proc) bool { return p.Name == name })
	var p *proc
	if i > 0 {
		p = c.procs[i]
	}
	c.mu.Unlock()
	if p == nil {
		return "", fmt.Errorf("raycluster: ReviveHost: no worker node %q", name)
	}
	if alive(p.PID) {
		return "", fmt.Errorf("raycluster: ReviveHost: node %q is still running (pid %d)", name, p.PID)
	}
	np, err := c.spawn(ctx, p.Name, p.IP, p.sub+"r", p.args, p.env, p.detach)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.procs = c.procs[:len(c.procs)-1] // spawn appended np; keep node order
	c.procs[i] = np
	c.mu.Unlock()
	c.logger.Info("ray worker revived", "node", name, "ip", p.IP)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-np.done:
			return "", fmt.Errorf("raycluster: ReviveHost: ray start for %s exited: %v; log: %s", name, np.waitErr, tailFile(np.Dir+"/ray-start.log", 5))
		default:
		}
		nodes, err := c.Nodes(ctx)
		if err == nil {
			for _, n := range nodes {
				if n.IP == p.IP && n.Alive() {
					return n.NodeID, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("raycluster: ReviveHost: node %q not ALIVE: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}
