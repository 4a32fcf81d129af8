package ray

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
)

// ClusterStatus is the dashboard's GET /api/cluster_status: the last report
// the cluster's autoscaler monitor wrote to the GCS (Ray's
// __autoscaling_status key), once per autoscaler pass (every 5 s by
// default). Autoscaler v1, what KubeRay's in-tree autoscaling runs with Ray
// 2.60 unless RAY_enable_autoscaler_v2 is set, writes it; a cluster with no
// autoscaler writes no Autoscaler part, and autoscaler v2 none at all.
type ClusterStatus struct {
	// Time is when the monitor wrote the report; zero when none has.
	Time time.Time
	// Autoscaler is the autoscaler's own part of the report; nil on a
	// cluster that runs no autoscaler v1.
	Autoscaler *AutoscalerReport
	// Error is the autoscaler's last error message, if any.
	Error string
}

// AutoscalerReport is what autoscaler v1 last reported about the nodes it
// manages. The node types are the autoscaler's (under KubeRay, the worker
// group names and "headgroup"), as written in NodeTypeMapping: the
// dashboard camel-cases every key of its answer (ActiveNodes' and
// PendingLaunches' keys arrive as "tpuV4-2X2X2" for a type "tpu_v4-2x2x2"),
// and the decoder maps them back.
type AutoscalerReport struct {
	// ActiveNodes counts, per node type, the nodes whose Ray node is up
	// and reporting.
	ActiveNodes map[string]int
	// PendingLaunches counts, per node type, the nodes the autoscaler has
	// asked its provider for that do not exist yet.
	PendingLaunches map[string]int
	// PendingNodes are the nodes that exist but are still being set up.
	PendingNodes []PendingNode
	// FailedNodes are the nodes whose setup failed.
	FailedNodes []PendingNode
	// NodeTypeMapping is every node the autoscaler manages (IP → type),
	// the ones whose Ray node has not registered yet included. Under
	// KubeRay a pod that runs counts as set up before its Ray node
	// registers, so it is in neither ActiveNodes nor PendingNodes then.
	NodeTypeMapping map[string]string
}

// PendingNode is one node of AutoscalerReport.PendingNodes or FailedNodes.
type PendingNode struct {
	IP, NodeType string
	// Status is the node's setup status ("waiting-for-ssh", "setting-up",
	// ...); empty for a failed node.
	Status string
}

// Starting counts, per node type, the nodes the autoscaler has asked for
// whose Ray node is not up yet: its pending launches and the nodes it
// manages that are neither active nor failed. Empty when it is starting
// none.
func (r *AutoscalerReport) Starting() map[string]int {
	out := map[string]int{}
	if r == nil {
		return out
	}
	known := map[string]int{}
	for _, t := range r.NodeTypeMapping {
		known[t]++
	}
	for _, f := range r.FailedNodes {
		known[f.NodeType]--
	}
	pending := map[string]int{}
	for _, p := range r.PendingNodes {
		pending[p.NodeType]++
	}
	for _, t := range slices.Sorted(maps.Keys(known)) {
		// Nodes not up: the mapping's count less the active ones, at
		// least the pending ones (pods with no IP yet share one key).
		if n := max(known[t]-r.ActiveNodes[t], pending[t]); n > 0 {
			out[t] = n
		}
	}
	for t, n := range pending {
		if _, ok := known[t]; !ok && n > 0 {
			out[t] = n
		}
	}
	for t, n := range r.PendingLaunches {
		if n > 0 {
			out[t] += n
		}
	}
	return out
}

// StartingSummary says in words which nodes the autoscaler is starting
// ("2 tpu-v4 nodes, 1 cpu node"), or "" when none.
func (r *AutoscalerReport) StartingSummary() string {
	s := r.Starting()
	parts := make([]string, 0, len(s))
	for _, t := range slices.Sorted(maps.Keys(s)) {
		word := "nodes"
		if s[t] == 1 {
			word = "node"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", s[t], t, word))
	}
	return strings.Join(parts, ", ")
}

// ClusterStatus reads the autoscaler's last report. It is a read and is
// retried.
func (c *Client) ClusterStatus(ctx context.Context) (ClusterStatus, error) {
	if err := c.check("ClusterStatus"); err != nil {
		return ClusterStatus{}, err
	}
	const path = "/api/cluster_status"
	var out struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			AutoscalingError *string `json:"autoscalingError"`
			ClusterStatus    *struct {
				Time             float64 `json:"time"`
				AutoscalerReport *struct {
					ActiveNodes     map[string]int    `json:"activeNodes"`
					PendingLaunches map[string]int    `json:"pendingLaunches"`
					PendingNodes    [][]*string       `json:"pendingNodes"`
					FailedNodes     [][]*string       `json:"failedNodes"`
					NodeTypeMapping map[string]string `json:"nodeTypeMapping"`
				} `json:"autoscalerReport"`
			} `json:"clusterStatus"`
		} `json:"data"`
	}
	ans, _, err := c.do(ctx, request{method: http.MethodGet, path: path, retry: true})
	if err != nil {
		return ClusterStatus{}, err
	}
	if err := decode(http.MethodGet, path, ans.body, &out); err != nil {
		return ClusterStatus{}, err
	}
	if !out.Result {
		return ClusterStatus{}, fmt.Errorf("ray: GET %s: the dashboard answered result=false: %s", path, out.Msg)
	}
	var st ClusterStatus
	if e := out.Data.AutoscalingError; e != nil {
		st.Error = *e
	}
	cs := out.Data.ClusterStatus
	if cs == nil {
		return st, nil
	}
	if cs.Time > 0 {
		st.Time = time.Unix(0, int64(cs.Time*float64(time.Second)))
	}
	ar := cs.AutoscalerReport
	if ar == nil {
		return st, nil
	}
	// The dashboard camel-cased the keys; NodeTypeMapping's values and the
	// node lists kept the types as the autoscaler wrote them.
	types := map[string]string{}
	addType := func(t string) { types[camelKey(t)] = t }
	for _, t := range ar.NodeTypeMapping {
		addType(t)
	}
	nodes := func(rows [][]*string) []PendingNode {
		var out []PendingNode
		for _, row := range rows {
			var p PendingNode
			for i, f := range []*string{&p.IP, &p.NodeType, &p.Status} {
				if i < len(row) && row[i] != nil {
					*f = *row[i]
				}
			}
			addType(p.NodeType)
			out = append(out, p)
		}
		return out
	}
	rep := &AutoscalerReport{
		PendingNodes:    nodes(ar.PendingNodes),
		FailedNodes:     nodes(ar.FailedNodes),
		NodeTypeMapping: ar.NodeTypeMapping,
	}
	unCamel := func(m map[string]int) map[string]int {
		out := make(map[string]int, len(m))
		for k, n := range m {
			if t, ok := types[k]; ok {
				k = t
			}
			out[k] += n
		}
		return out
	}
	rep.ActiveNodes, rep.PendingLaunches = unCamel(ar.ActiveNodes), unCamel(ar.PendingLaunches)
	st.Autoscaler = rep
	return st, nil
}

// camelKey is the key the dashboard writes for a key k of its answer (its
// to_camel_case: the words between underscores, every one after the
// first in Python's title case).
func camelKey(k string) string {
	words := strings.Split(k, "_")
	var b strings.Builder
	b.WriteString(words[0])
	for _, w := range words[1:] {
		b.WriteString(pyTitle(w))
	}
	return b.String()
}

// pyTitle is Python's str.title: a letter that follows a letter is lower
// case, any other letter upper case.
func pyTitle(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) && prevLetter:
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteRune(r)
		}
		prevLetter = unicode.IsLetter(r)
	}
	return b.String()
}
