package kuberay

import (
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// Plumbing the tests of package kuberay_test look into.
var (
	ClusterSelectorKey          = clusterSelectorKey
	DecodeManifest              = decodeManifest
	DecodeJobYAML               = decodeJobYAML
	MarshalJSON                 = marshalJSON
	MarshalYAML                 = marshalYAML
	PackJobWorkingDir           = packJobWorkingDir
	PackReplicaRuntime          = packReplicaRuntime
	PackSubmittedWorkingDir     = packSubmittedWorkingDir
	PlanDigest                  = planDigest
	ReplicaRuntimeConfigMap     = replicaRuntimeConfigMap
	ReplicaRuntimeConfigMapName = replicaRuntimeConfigMapName
	ReplicaRuntimeMountPath     = replicaRuntimeMountPath
	ServeConfigV2               = serveConfigV2
	ServiceStatusOf             = serviceStatusOf
	JobStatusOf                 = jobStatusOf
	JobFinished                 = jobFinished
	ClusterStatusOf             = clusterStatusOf
	ShipsWorkingDir             = shipsWorkingDir
	Validate                    = validateJob
	ValidateService             = validateService
	ValidateCluster             = validateRayCluster
	WorkingDirConfigMapName     = workingDirConfigMapName
	WorkingDirConfigMap         = workingDirConfigMap
	NewName                     = newName
	SubmitterContainer          = submitterContainer
	MaxObjectBytes              = maxObjectBytes
)

// NewAnswering is New whose requests fail when the apiserver has not
// begun to answer within d.
var NewAnswering = newAnswering

// ErrAlreadyExists is backend.ErrAlreadyExists, as the tests name it.
var ErrAlreadyExists = backend.ErrAlreadyExists

// RenderJob, RenderService, RenderCluster and RenderPlan render one kind
// of object as a Backend does, with a working_dir packed beforehand or
// none (a Backend without a Kubernetes client): what Render does but the
// packing.
func RenderJob(p *placement.Plan, o Options, in ...RenderInput) (*rayv1ac.RayJobApplyConfiguration, error) {
	return renderJob(p, testSettings(o, in, nil))
}

func RenderService(p *placement.Plan, o Options, in ...RenderInput) (*rayv1ac.RayServiceApplyConfiguration, error) {
	return renderService(p, testSettings(o, in, nil))
}

func RenderCluster(p *placement.Plan, o Options, in ...RenderInput) (*rayv1ac.RayClusterApplyConfiguration, error) {
	return renderCluster(p, testSettings(o, in, nil))
}

func RenderPlan(p *placement.Plan, o Options, in ...RenderInput) (any, error) {
	return renderObject(p, testSettings(o, in, nil))
}

// RenderWith renders p's object with a working_dir packed beforehand.
func RenderWith(p *placement.Plan, o Options, name string, wd *WorkingDir) (any, error) {
	return renderObject(p, testSettings(o, []RenderInput{{Name: name}}, wd))
}

func testSettings(o Options, in []RenderInput, wd *WorkingDir) settings {
	s := settings{Options: o, WorkingDir: wd}
	if len(in) > 0 {
		s.Name = in[0].Name
	}
	return s
}

// WorkloadWaitMessage words why a Workload waits (queue_status.go).
var WorkloadWaitMessage = workloadWaitMessage
