package rayruntime

// CheckedRayVersion is the Ray release the runtime's use of Ray's private
// APIs ([PrivateRayAPIs]) was checked against.
const CheckedRayVersion = "2.60.0"

// PrivateAPI is a private Ray API (an underscored module or attribute, or
// an attribute of a class Ray does not export) that the runtime relies
// on: Attr, a dotted path of attributes, must resolve in Module. An
// attribute an instance gets in __init__ (self.<name> = ...) or as a
// dataclass field counts as an attribute of its class.
type PrivateAPI struct {
	Module string `json:"module"`
	Attr   string `json:"attr"`
	// UsedFor says what the runtime does with it.
	UsedFor string `json:"used_for"`
}

// PrivateRayAPIs returns the private Ray APIs the runtime relies on, in
// order; a fresh slice on every call. The Python side reads the same list
// from the protocol description: the launcher checks them before fit()
// and reports what is missing in the outcome's warnings, and the
// package's tests import each one from the installed Ray.
func PrivateRayAPIs() []PrivateAPI {
	const (
		callback = "ray.train.v2._internal.execution.callback"
		state    = "ray.train.v2._internal.execution.controller.state"
		worker   = "ray.train.v2._internal.execution.worker_group.worker"
		recorded = "the run's record (outcome attempts and timeline)"
	)
	return []PrivateAPI{
		{callback, "ControllerCallback.after_controller_state_update", recorded},
		{callback, "ControllerCallback.before_controller_execute_failure_decision", recorded},
		{callback, "ControllerCallback.before_controller_execute_resize_decision", recorded},
		{callback, "WorkerGroupCallback.after_worker_group_start", recorded},
		{callback, "ReportCallback.after_report", "the checkpoint each attempt resumed from"},
		{state, "TrainControllerState._state_type", "the state names of the timeline"},
		{state, "TrainControllerStateType.state_name", "the state names of the timeline"},
		{state, "ErroredState.training_failed_error", "the error of a failed state"},
		{"ray.train.v2._internal.execution.worker_group", "WorkerGroup.get_workers", "the workers of each attempt"},
		{worker, "Worker.metadata", "the node of each worker"},
		{worker, "Worker.distributed_context", "the rank of each worker"},
		{worker, "ActorMetadata.node_id", "the node of each worker"},
		{worker, "ActorMetadata.node_ip", "the node of each worker"},
		{"ray.train.v2._internal.execution.context", "DistributedContext.world_rank", "the rank of each worker"},
		{"ray.train.v2._internal.execution.training_report", "_TrainingReport.checkpoint", "the checkpoint each attempt resumed from"},
		{"ray.train.v2._internal.execution.training_report", "_TrainingReport.metrics", "the checkpoint each attempt resumed from"},
		{"ray.train.v2._internal.execution.failure_handling", "FailureDecision", "the failure decisions of the timeline"},
		{"ray.train.v2._internal.execution.scaling_policy", "ResizeDecision.num_workers", "the resize decisions of the timeline"},
		{"ray.serve._private.common", "ReplicaID.unique_id", "the slice placement group's name and the profiler reports of a replica"},
	}
}
