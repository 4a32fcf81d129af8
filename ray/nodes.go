package ray

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
)

// Node is one node of the cluster as the dashboard's node summary
// (GET /nodes?view=summary, the raylet part of each entry) reports it.
type Node struct {
	// ID is the node id (hex).
	ID string `json:"nodeId"`
	// IP is the node's address (its raylet's node manager address).
	IP string `json:"nodeManagerAddress"`
	// Hostname is the node's host name.
	Hostname string `json:"nodeManagerHostname"`
	// IsHead reports whether the node is the head.
	IsHead bool `json:"isHeadNode"`
	// State is ALIVE or DEAD.
	State string `json:"state"`
	// Labels are the node labels (ray.io/node-id, and on TPU hosts
	// ray.io/tpu-slice-name, ray.io/tpu-worker-id, ...).
	Labels map[string]string `json:"labels"`
	// Resources are the node's total logical resources.
	Resources map[string]float64 `json:"resourcesTotal"`
	// MetricsExportPort is the port where the node's dashboard agent
	// serves Prometheus text at /metrics: `ray start --metrics-export-port`,
	// or the port Ray picked when that flag is 0 (its default).
	MetricsExportPort int `json:"metricsExportPort"`
	// ReportedTPUs counts the TPU chips in the node's latest physical
	// stats (the summary's tpus list, what its agent read from the TPU
	// device plugin in its latest round; 0 on a node without TPUs), or -1
	// when the dashboard has no stats for the node yet. The agent's ray_tpu_* gauges keep their last
	// values when a round reads nothing, so 0 here beside exported gauges
	// means the gauges are stale.
	ReportedTPUs int `json:"-"`
}

// Alive reports whether the node's state is ALIVE.
func (n Node) Alive() bool { return n.State == "ALIVE" }

// MetricsAddr is the host:port of the node's Prometheus endpoint, or ""
// when the dashboard reports no port.
func (n Node) MetricsAddr() string {
	if n.MetricsExportPort <= 0 || n.IP == "" {
		return ""
	}
	return net.JoinHostPort(n.IP, strconv.Itoa(n.MetricsExportPort))
}

// Nodes lists the cluster's nodes, dead ones included, head first, then
// by IP and id. It is a read and is retried.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	if err := c.check("Nodes"); err != nil {
		return nil, err
	}
	const path = "/nodes"
	var out struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Summary []struct {
				Raylet Node               `json:"raylet"`
				TPUs   *[]json.RawMessage `json:"tpus"`
			} `json:"summary"`
		} `json:"data"`
	}
	ans, _, err := c.do(ctx, request{method: http.MethodGet, path: path, query: "view=summary", retry: true})
	if err != nil {
		return nil, err
	}
	if err := decode(http.MethodGet, path, ans.body, &out); err != nil {
		return nil, err
	}
	if !out.Result {
		return nil, fmt.Errorf("ray: GET %s?view=summary: the dashboard answered result=false: %s", path, out.Msg)
	}
	nodes := make([]Node, 0, len(out.Data.Summary))
	for _, s := range out.Data.Summary {
		n := s.Raylet
		n.ReportedTPUs = -1
		if s.TPUs != nil {
			n.ReportedTPUs = len(*s.TPUs)
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b Node) int {
		if a.IsHead != b.IsHead {
			if a.IsHead {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(a.ID, b.ID))
	})
	return nodes, nil
}
