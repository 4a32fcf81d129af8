package kuberay_test

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/kuberay"
)

// Every state a RayService status maps to, from statuses as KubeRay v1.5.0
// writes them.
func TestServiceStatusOf(t *testing.T) {
	t.Parallel()
	cond := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: status, Reason: reason}}
	}
	apps := func(status string) map[string]rayv1.AppStatus {
		return map[string]rayv1.AppStatus{"chat": {Status: status, Message: "boom", Deployments: map[string]rayv1.ServeDeploymentStatus{"LLM": {Status: "UNHEALTHY"}}}}
	}
	now := metav1.Now()
	cases := []struct {
		name    string
		status  rayv1.RayServiceStatuses
		deleted bool
		want    backend.ServiceState
		message string
	}{
		{"new", rayv1.RayServiceStatuses{}, false, backend.ServiceNotStarted, ""},
		{"initializing", rayv1.RayServiceStatuses{Conditions: cond("False", "Initializing"), PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1"}},
			false, backend.ServiceDeploying, "Ready=False Initializing; pending RayCluster c-1"},
		{"ready", rayv1.RayServiceStatuses{Conditions: cond("True", "NonZeroServeEndpoints"), ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1", Applications: apps("RUNNING")}},
			false, backend.ServiceRunning, "Ready=True NonZeroServeEndpoints; active RayCluster c-1"},
		{"timed out", rayv1.RayServiceStatuses{Conditions: cond("False", "InitializingTimeout")}, false, backend.ServiceDeployFailed, "Ready=False InitializingTimeout"},
		{"app failed", rayv1.RayServiceStatuses{Conditions: cond("False", "Initializing"), PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1", Applications: apps("DEPLOY_FAILED")}},
			false, backend.ServiceDeployFailed, "Ready=False Initializing; pending RayCluster c-1; application chat DEPLOY_FAILED: boom"},
		{"app unhealthy", rayv1.RayServiceStatuses{Conditions: cond("True", "NonZeroServeEndpoints"), ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1", Applications: apps("UNHEALTHY")}},
			false, backend.ServiceUnhealthy, "Ready=True NonZeroServeEndpoints; active RayCluster c-1; application chat UNHEALTHY: boom"},
		{"no endpoints", rayv1.RayServiceStatuses{Conditions: cond("False", "ZeroServeEndpoints"), ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1"}},
			false, backend.ServiceUnhealthy, "Ready=False ZeroServeEndpoints; active RayCluster c-1"},
		// KubeRay v1.5.0 promotes the pending RayCluster once Ray runs the
		// applications, and sets Ready only when it counts the serve
		// Service's endpoints: until then the promoted cluster is still
		// coming up, not unhealthy.
		{"promoted, no endpoints yet", rayv1.RayServiceStatuses{Conditions: cond("False", "Initializing"), ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "c-1", Applications: apps("RUNNING")}},
			false, backend.ServiceDeploying, "Ready=False Initializing; active RayCluster c-1"},
		{"deleting", rayv1.RayServiceStatuses{Conditions: cond("True", "NonZeroServeEndpoints")}, true, backend.ServiceDeleting, "Ready=True NonZeroServeEndpoints"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "chat"}, Status: c.status}
			if c.deleted {
				svc.DeletionTimestamp = &now
			}
			st := kuberay.ServiceStatusOf(svc)
			if st.State != c.want || st.Message != c.message || st.Name != "chat" || st.Backend != kuberay.Name {
				t.Errorf("got %s %q, want %s %q", st.State, st.Message, c.want, c.message)
			}
			if c.status.ActiveServiceStatus.Applications != nil && (len(st.Deployments) != 1 || st.Deployments[0].Name != "LLM") {
				t.Errorf("deployments %+v, want LLM", st.Deployments)
			}
		})
	}
}
