package placement

import "strconv"

// Role says what part of a workload a slice group holds.
type Role string

// The roles.
const (
	// RoleWorkerGroup is a Ray Train worker group: one worker per bundle.
	RoleWorkerGroup Role = "WorkerGroup"
	// RoleReplica is one replica of a Ray Serve deployment.
	RoleReplica Role = "Replica"
	// RoleDataWorkers is the actor pool of one Ray Data map step.
	RoleDataWorkers Role = "DataWorkers"
	// RolePlacementGroup is a slice placement group reserved by itself.
	RolePlacementGroup Role = "PlacementGroup"
)

// Part names the part of a workload a slice group belongs to, so a backend
// or the simulator can say "deployment llm replica 0 spans two slices".
type Part struct {
	Role Role `json:"role"`
	// Name is the trainer's run name, the deployment's name, the map
	// step's name, or the plan's name for a bare placement group.
	Name string `json:"name"`
	// Index is the replica index of a deployment replica, or the position
	// of a bare placement group in its plan; 0 otherwise.
	Index int `json:"index,omitempty"`
}

// String reads as prose: `worker group "mnist"`, `deployment "llm"
// replica 0`.
func (p Part) String() string {
	switch p.Role {
	case RoleWorkerGroup:
		return "worker group " + strconv.Quote(p.Name)
	case RoleReplica:
		return "deployment " + strconv.Quote(p.Name) + " replica " + strconv.Itoa(p.Index)
	case RoleDataWorkers:
		return "data step " + strconv.Quote(p.Name)
	case RolePlacementGroup:
		return "placement group " + strconv.Itoa(p.Index) + " of " + strconv.Quote(p.Name)
	}
	return string(p.Role) + " " + strconv.Quote(p.Name)
}

// Landing is where one worker bundle of a plan landed, as a backend
// reports it. For a Ray Train worker group, Bundle is the worker's rank.
type Landing struct {
	// Group indexes Plan.Slices.
	Group int  `json:"group"`
	Part  Part `json:"part"`
	// Slice is the requested slice the bundle belongs to; Bundle its
	// position over all slices of the group.
	Slice  int `json:"slice"`
	Bundle int `json:"bundle"`
	// State is the bundle's placement group state (CREATED, PENDING, ...).
	State string `json:"state"`
	// Node and SliceName say where it landed ("" when it did not).
	Node      string `json:"node,omitempty"`
	SliceName string `json:"sliceName,omitempty"`
}
