package kuberay

import (
	"maps"
	"slices"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/raytpu/raytpu/backend"
)

// serviceStatusOf reads a RayService's status as a backend.ServiceStatus:
//
//   - DELETING once the RayService is being deleted;
//   - DEPLOY_FAILED when Ray reports an application DEPLOY_FAILED, or
//     when Ready is False with reason InitializingTimeout (KubeRay gave up);
//   - UNHEALTHY when Ray reports an application UNHEALTHY;
//   - RUNNING when KubeRay's Ready condition is True;
//   - UNHEALTHY when Ready is False with reason ZeroServeEndpoints (an
//     active RayCluster served, and its serve endpoints dropped to 0);
//   - NOT_STARTED before KubeRay has looked at it (no condition, no
//     cluster);
//   - DEPLOYING otherwise: KubeRay is preparing a RayCluster, waiting for
//     Ray to run the applications, or has promoted the RayCluster that
//     runs them and waits for the serve Service's first endpoint (KubeRay
//     v1.5.0 keeps Ready False, reason Initializing, until it counts one).
//
// The message is the Ready condition's reason and message, then the
// active and pending RayClusters, then the message of each application Ray
// reports not RUNNING. Deployments are those of the applications of the
// active RayCluster (of the pending one before there is an active one).
func serviceStatusOf(svc *rayv1.RayService) *backend.ServiceStatus {
	s := svc.Status
	st := &backend.ServiceStatus{Backend: Name, Name: svc.Name, Ran: true, Time: time.Now()}
	apps := s.ActiveServiceStatus.Applications
	if s.ActiveServiceStatus.RayClusterName == "" {
		apps = s.PendingServiceStatus.Applications
	}
	ready := meta.FindStatusCondition(s.Conditions, string(rayv1.RayServiceReady))
	var parts []string
	if ready != nil {
		p := "Ready=" + string(ready.Status) + " " + ready.Reason
		if ready.Message != "" {
			p += ": " + ready.Message
		}
		parts = append(parts, p)
	}
	if c := s.ActiveServiceStatus.RayClusterName; c != "" {
		parts = append(parts, "active RayCluster "+c)
	}
	if c := s.PendingServiceStatus.RayClusterName; c != "" {
		parts = append(parts, "pending RayCluster "+c)
	}
	var appFailed, appUnhealthy bool
	for _, name := range slices.Sorted(maps.Keys(apps)) {
		app := apps[name]
		switch app.Status {
		case rayv1.ApplicationStatusEnum.DEPLOY_FAILED:
			appFailed = true
		case rayv1.ApplicationStatusEnum.UNHEALTHY:
			appUnhealthy = true
		}
		if app.Status != rayv1.ApplicationStatusEnum.RUNNING {
			p := "application " + name + " " + app.Status
			if app.Message != "" {
				p += ": " + app.Message
			}
			parts = append(parts, p)
		}
		for _, d := range slices.Sorted(maps.Keys(app.Deployments)) {
			ds := app.Deployments[d]
			st.Deployments = append(st.Deployments, backend.DeploymentStatus{Name: d, Status: ds.Status, Message: ds.Message})
		}
	}
	st.Message = strings.Join(parts, "; ")
	switch {
	case svc.DeletionTimestamp != nil:
		st.State = backend.ServiceDeleting
	case appFailed || ready != nil && ready.Reason == string(rayv1.RayServiceInitializingTimeout):
		st.State = backend.ServiceDeployFailed
	case appUnhealthy:
		st.State = backend.ServiceUnhealthy
	case ready != nil && ready.Status == "True":
		st.State = backend.ServiceRunning
	case ready != nil && ready.Reason == string(rayv1.ZeroServeEndpoints):
		st.State = backend.ServiceUnhealthy
	case ready == nil && s.PendingServiceStatus.RayClusterName == "":
		st.State = backend.ServiceNotStarted
	default:
		st.State = backend.ServiceDeploying
	}
	return st
}
