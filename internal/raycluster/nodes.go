package raycluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"
)

// NodeInfo is a node as the Ray state API reports it.
type NodeInfo struct {
	NodeID    string             `json:"node_id"`
	IP        string             `json:"node_ip"`
	Name      string             `json:"node_name"`
	IsHead    bool               `json:"is_head_node"`
	State     string             `json:"state"`
	Resources map[string]float64 `json:"resources_total"`
	Labels    map[string]string  `json:"labels"`
}

// Alive reports whether the node's state is ALIVE.
func (n NodeInfo) Alive() bool { return n.State == "ALIVE" }

// Nodes lists the cluster's nodes (dead ones included) from the dashboard's
// state API.
func (c *Cluster) Nodes(ctx context.Context) ([]NodeInfo, error) {
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.get(ctx, hc, "/api/v0/nodes?detail=1&limit=1000")
	if err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("raycluster: list nodes: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 512)]))
	}
	var out struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Result []NodeInfo `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("raycluster: list nodes: %w", err)
	}
	if !out.Result {
		return nil, fmt.Errorf("raycluster: list nodes: %s", out.Msg)
	}
	nodes := out.Data.Result.Result
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].IsHead != nodes[j].IsHead {
			return nodes[i].IsHead
		}
		return nodes[i].IP < nodes[j].IP
	})
	return nodes, nil
}

// NodeIP returns the loopback address of the named node ("head" for the
// head, else Node.Name or "worker-<i>").
func (c *Cluster) NodeIP(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.Name == name {
			return p.IP, true
		}
	}
	return "", false
}
