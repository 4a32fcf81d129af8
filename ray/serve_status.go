package ray

import "encoding/json"

// ServeApplicationStatus is a Serve application's status.
type ServeApplicationStatus string

// Application statuses (Ray's ApplicationStatus). NOT_STARTED is what Ray
// reports for an application that does not exist; it never appears in
// ServeDetails.Applications.
const (
	ServeAppNotStarted   ServeApplicationStatus = "NOT_STARTED"
	ServeAppDeploying    ServeApplicationStatus = "DEPLOYING"
	ServeAppDeployFailed ServeApplicationStatus = "DEPLOY_FAILED"
	ServeAppRunning      ServeApplicationStatus = "RUNNING"
	ServeAppUnhealthy    ServeApplicationStatus = "UNHEALTHY"
	ServeAppDeleting     ServeApplicationStatus = "DELETING"
)

// ServeDeploymentStatus is a Serve deployment's status.
type ServeDeploymentStatus string

// Deployment statuses (Ray's DeploymentStatus).
const (
	ServeDeploymentUpdating     ServeDeploymentStatus = "UPDATING"
	ServeDeploymentHealthy      ServeDeploymentStatus = "HEALTHY"
	ServeDeploymentUnhealthy    ServeDeploymentStatus = "UNHEALTHY"
	ServeDeploymentDeployFailed ServeDeploymentStatus = "DEPLOY_FAILED"
	ServeDeploymentUpscaling    ServeDeploymentStatus = "UPSCALING"
	ServeDeploymentDownscaling  ServeDeploymentStatus = "DOWNSCALING"
)

// ServeReplicaState is a Serve replica's state.
type ServeReplicaState string

// Replica states (Ray's ReplicaState).
const (
	ServeReplicaStarting         ServeReplicaState = "STARTING"
	ServeReplicaUpdating         ServeReplicaState = "UPDATING"
	ServeReplicaRecovering       ServeReplicaState = "RECOVERING"
	ServeReplicaRunning          ServeReplicaState = "RUNNING"
	ServeReplicaStopping         ServeReplicaState = "STOPPING"
	ServeReplicaStopped          ServeReplicaState = "STOPPED"
	ServeReplicaPendingMigration ServeReplicaState = "PENDING_MIGRATION"
)

// Application sources (ApplicationDetails.Source).
const (
	ServeSourceDeclarative = "declarative" // deployed through the REST API
	ServeSourceImperative  = "imperative"  // deployed from Python (serve.run)
)

// ServeDetails is the answer of GET /api/serve/applications/ (Ray's
// ServeInstanceDetails). Ray leaves out unset fields, so any field may be
// zero. Parts this client does not interpret are kept as raw JSON.
type ServeDetails struct {
	// ControllerInfo is empty when Serve is not running.
	ControllerInfo ServeActorDetails `json:"controller_info"`
	ProxyLocation  string            `json:"proxy_location,omitempty"`
	// HTTPOptions and GRPCOptions are the options Serve runs with.
	HTTPOptions *ServeHTTPOptions `json:"http_options,omitempty"`
	GRPCOptions *ServeGRPCOptions `json:"grpc_options,omitempty"`
	// Proxies maps node ids to the proxy on that node.
	Proxies map[string]ServeProxyDetails `json:"proxies,omitempty"`
	// Applications maps names to every live application, however it was
	// deployed.
	Applications   map[string]ApplicationDetails `json:"applications"`
	TargetCapacity *float64                      `json:"target_capacity,omitempty"`
	TargetGroups   json.RawMessage               `json:"target_groups,omitempty"`
	// ControllerHealthMetrics is the controller's loop statistics.
	ControllerHealthMetrics json.RawMessage `json:"controller_health_metrics,omitempty"`
	// RestoresUnsetConfigOptions: removing a config override restores the
	// value in code (true on Ray 2.60).
	RestoresUnsetConfigOptions bool `json:"restores_unset_config_options,omitempty"`
}

// Running reports whether Serve is running (its controller exists).
func (d ServeDetails) Running() bool { return d.ControllerInfo.ActorID != "" }

// ServeActorDetails locates a Serve actor (controller, proxy or replica).
type ServeActorDetails struct {
	NodeID         string `json:"node_id,omitempty"`
	NodeIP         string `json:"node_ip,omitempty"`
	NodeInstanceID string `json:"node_instance_id,omitempty"`
	ActorID        string `json:"actor_id,omitempty"`
	ActorName      string `json:"actor_name,omitempty"`
	WorkerID       string `json:"worker_id,omitempty"`
	// LogFilePath is relative to Ray's log directory.
	LogFilePath string `json:"log_file_path,omitempty"`
}

// ServeProxyDetails is a proxy actor; Status is STARTING, HEALTHY,
// UNHEALTHY, DRAINING or DRAINED.
type ServeProxyDetails struct {
	ServeActorDetails
	Status string `json:"status"`
}

// ApplicationDetails is one Serve application.
type ApplicationDetails struct {
	Name string `json:"name"`
	// RoutePrefix is nil when the application is not exposed over HTTP
	// (or while its route is not yet known).
	RoutePrefix *string                `json:"route_prefix"`
	DocsPath    *string                `json:"docs_path"`
	Status      ServeApplicationStatus `json:"status"`
	// Message explains the status: for DEPLOY_FAILED the build traceback
	// or "Failed to update the deployments [...]" (the cause is then in
	// the deployments' messages).
	Message string `json:"message"`
	// LastDeployedTimeS is a Unix time in seconds.
	LastDeployedTimeS float64 `json:"last_deployed_time_s"`
	// DeployedAppConfig is the application's config as last submitted
	// through the REST API (only the keys that were set), as Ray reports
	// it. It is null for applications deployed from Python and for
	// applications being deleted.
	DeployedAppConfig json.RawMessage `json:"deployed_app_config,omitempty"`
	// Source is "declarative" (REST API), "imperative" (Python) or
	// "unknown".
	Source                string                       `json:"source"`
	Deployments           map[string]DeploymentDetails `json:"deployments"`
	ExternalScalerEnabled bool                         `json:"external_scaler_enabled"`
	DeploymentTopology    json.RawMessage              `json:"deployment_topology,omitempty"`
}

// hasConfig reports whether Ray holds a declarative config for the app.
func (a ApplicationDetails) hasConfig() bool {
	return len(a.DeployedAppConfig) > 0 && string(a.DeployedAppConfig) != "null"
}

// DeploymentDetails is one deployment of an application.
type DeploymentDetails struct {
	Name   string                `json:"name"`
	Status ServeDeploymentStatus `json:"status"`
	// StatusTrigger says what caused the status, e.g.
	// CONFIG_UPDATE_STARTED, REPLICA_STARTUP_FAILED, HEALTH_CHECK_FAILED.
	StatusTrigger string `json:"status_trigger"`
	// Message says why a deployment is slow or failing: replicas that
	// take more than 30 s to be scheduled or to initialise, constructor
	// failures with their traceback, failed health checks.
	Message string `json:"message"`
	// DeploymentConfig is the effective config. Ray 2.60 leaves out the
	// placement-group fields and logging_config here.
	DeploymentConfig  json.RawMessage `json:"deployment_config,omitempty"`
	TargetNumReplicas int             `json:"target_num_replicas"`
	// RequiredResources is one replica actor's demand (not its placement
	// group's bundles).
	RequiredResources  map[string]float64 `json:"required_resources,omitempty"`
	Replicas           []ReplicaDetails   `json:"replicas"`
	RecentDeadReplicas []ReplicaDetails   `json:"recent_dead_replicas,omitempty"`
	AutoscalingDetail  json.RawMessage    `json:"autoscaling_detail,omitempty"`
}

// ReplicaDetails is one replica. Ray 2.60 does not report a replica's
// placement group here; the State API's actor record
// (GET /api/v0/actors, placement_group_id) has it.
type ReplicaDetails struct {
	ServeActorDetails
	ReplicaID string            `json:"replica_id"`
	State     ServeReplicaState `json:"state"`
	PID       int               `json:"pid,omitempty"`
	// StartTimeS is a Unix time in seconds.
	StartTimeS float64 `json:"start_time_s"`
}
