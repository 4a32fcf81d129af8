package ray

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// The State API (GET /api/v0/...) lists what a Ray cluster holds: its
// placement groups and actors (Nodes reads the nodes from the dashboard's
// node summary). Every list is read with detail=1 and
// a limit of stateLimit entries, retrying like every other read. Ray
// answers
//
//	{"result": true, "msg": "", "data": {"result": {"total": N,
//	  "num_after_truncation": n, "result": [...], "partial_failure_warning": "",
//	  "warnings": null}}}
//
// and int64 fields (the *_ns and *_us stats, num_restarts) as strings.

// stateLimit is the most entries one State API list asks for (Ray's own
// maximum, RAY_MAX_LIMIT_FROM_API_SERVER, is 10,000).
const stateLimit = 10000

// Placement group states (Ray's PlacementGroupTableData.PlacementGroupState).
// A group no node can ever hold stays PENDING; its Stats.SchedulingState
// says INFEASIBLE.
const (
	PlacementGroupPending     = "PENDING"
	PlacementGroupPrepared    = "PREPARED"
	PlacementGroupCreated     = "CREATED"
	PlacementGroupRemoved     = "REMOVED"
	PlacementGroupRescheduled = "RESCHEDULING"
)

// Placement group scheduling states (PlacementGroupStats.SchedulingState).
const (
	PlacementGroupSchedulingQueued     = "QUEUED"
	PlacementGroupSchedulingRemoved    = "REMOVED"
	PlacementGroupSchedulingRetrying   = "SCHEDULING_RETRYING"
	PlacementGroupSchedulingNoResource = "NO_RESOURCES"
	PlacementGroupSchedulingInfeasible = "INFEASIBLE"
	PlacementGroupSchedulingFailed     = "FAILED_TO_COMMIT_RESOURCES"
	PlacementGroupSchedulingFinished   = "FINISHED"
)

// PlacementGroupState is one placement group as the State API lists it.
type PlacementGroupState struct {
	ID   string `json:"placement_group_id"`
	Name string `json:"name"`
	// CreatorJobID is the job of the driver or actor that created it.
	CreatorJobID string `json:"creator_job_id"`
	// State is PENDING, PREPARED, CREATED, REMOVED or RESCHEDULING.
	State      string              `json:"state"`
	Strategy   string              `json:"strategy,omitempty"`
	IsDetached bool                `json:"is_detached"`
	Bundles    []PlacementBundle   `json:"bundles"`
	Stats      PlacementGroupStats `json:"stats"`
}

// PlacementBundle is one bundle of a placement group.
type PlacementBundle struct {
	BundleID struct {
		PlacementGroupID string `json:"placement_group_id"`
		BundleIndex      int    `json:"bundle_index"`
	} `json:"bundle_id"`
	// Resources are the bundle's resources ("unit_resources").
	Resources     map[string]float64 `json:"unit_resources"`
	LabelSelector map[string]string  `json:"label_selector,omitempty"`
	// NodeID is the node holding the bundle; empty while it is not placed.
	NodeID string `json:"node_id"`
}

// PlacementGroupStats is a placement group's scheduling record.
type PlacementGroupStats struct {
	// SchedulingState is QUEUED, SCHEDULING_RETRYING, NO_RESOURCES,
	// INFEASIBLE, FAILED_TO_COMMIT_RESOURCES, FINISHED or REMOVED.
	SchedulingState   string `json:"scheduling_state"`
	SchedulingAttempt int    `json:"scheduling_attempt"`
	// CreationRequestReceivedNs is a Unix time in nanoseconds (Ray sends
	// it as a string).
	CreationRequestReceivedNs int64 `json:"creation_request_received_ns,string,omitempty"`
}

// ActorState is one actor as the State API lists it.
type ActorState struct {
	ActorID   string `json:"actor_id"`
	Name      string `json:"name"`
	ClassName string `json:"class_name"`
	// State is DEPENDENCIES_UNREADY, PENDING_CREATION, ALIVE, RESTARTING
	// or DEAD.
	State            string `json:"state"`
	JobID            string `json:"job_id"`
	NodeID           string `json:"node_id"`
	PID              int    `json:"pid"`
	RayNamespace     string `json:"ray_namespace"`
	PlacementGroupID string `json:"placement_group_id,omitempty"`
}

// PlacementGroups lists the cluster's placement groups, REMOVED ones
// included (Ray keeps a bounded history of them).
func (c *Client) PlacementGroups(ctx context.Context) ([]PlacementGroupState, error) {
	if err := c.check("PlacementGroups"); err != nil {
		return nil, err
	}
	return stateList[PlacementGroupState](ctx, c, "placement_groups")
}

// Actors lists the cluster's actors, DEAD ones included.
func (c *Client) Actors(ctx context.Context) ([]ActorState, error) {
	if err := c.check("Actors"); err != nil {
		return nil, err
	}
	return stateList[ActorState](ctx, c, "actors")
}

// stateList reads one State API list (retrying) and checks that Ray
// answered it whole.
func stateList[T any](ctx context.Context, c *Client, resource string) ([]T, error) {
	q := url.Values{"detail": {"1"}, "limit": {strconv.Itoa(stateLimit)}}
	path := "/api/v0/" + resource
	var doc struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Total              int    `json:"total"`
				NumAfterTruncation int    `json:"num_after_truncation"`
				Result             []T    `json:"result"`
				PartialFailure     string `json:"partial_failure_warning"`
			} `json:"result"`
		} `json:"data"`
	}
	ans, _, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q.Encode(), retry: true})
	if err != nil {
		return nil, err
	}
	if err := decode(http.MethodGet, path, ans.body, &doc); err != nil {
		return nil, err
	}
	if !doc.Result {
		return nil, &APIError{Status: http.StatusOK, Method: http.MethodGet, Path: path, Message: doc.Msg}
	}
	r := doc.Data.Result
	if r.Total > len(r.Result) {
		return r.Result, fmt.Errorf("ray: GET /api/v0/%s: Ray listed %d of %d entries (limit %d)", resource, len(r.Result), r.Total, stateLimit)
	}
	return r.Result, nil
}
