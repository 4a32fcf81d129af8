package kuberay_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/raytpu/kuberay"
)

// obj decodes a Kueue object as the dynamic client returns it.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(append(j[:len(j)-1], []byte(`,"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload"}`)...)); err != nil {
		t.Fatal(err)
	}
	return u
}

// The wait message of a pending Workload, as Kueue v0.17 writes one for a
// RayJob on one v4 2x2x2 slice while another holds the ClusterQueue's
// 8 chips (the shapes were read from a real Workload and ClusterQueue).
func TestWorkloadWaitMessage(t *testing.T) {
	t.Parallel()
	wl := obj(t, `
spec:
  queueName: team-a
  podSets:
  - {name: head, count: 1, template: {spec: {containers: [{name: ray-head}]}}}
  - {name: v4-16, count: 2, template: {spec: {containers: [{name: ray-worker, resources: {requests: {google.com/tpu: "4"}}}]}}}
  - {name: submitter, count: 1, template: {spec: {containers: [{name: ray-job-submitter, resources: {requests: {cpu: 500m, memory: 200Mi}}}]}}}
status:
  conditions:
  - type: QuotaReserved
    status: "False"
    reason: Pending
    message: "couldn't assign flavors to pod set v4-16: insufficient unused quota for google.com/tpu in flavor default, 8 more needed"
`)
	cq := obj(t, `
status:
  flavorsReservation:
  - name: default
    resources:
    - {name: cpu, total: 500m}
    - {name: google.com/tpu, total: "8"}
`)
	want := "queued by Kueue: ClusterQueue team-cq, needs 8 google.com/tpu, 8 in use; couldn't assign flavors to pod set v4-16: insufficient unused quota for google.com/tpu in flavor default, 8 more needed"
	if got := kuberay.WorkloadWaitMessage(wl, "team-a", "team-cq", cq); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Kueue's own totals win over the templates; an unreadable
	// ClusterQueue leaves the use out; no ClusterQueue names the LocalQueue.
	wl.Object["status"].(map[string]any)["resourceRequests"] = []any{
		map[string]any{"name": "v4-16", "resources": map[string]any{"google.com/tpu": "16"}},
	}
	if got, want := kuberay.WorkloadWaitMessage(wl, "team-a", "", nil), "queued by Kueue: LocalQueue team-a, needs 16 google.com/tpu; couldn't"; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("got %q, want it to start %q", got, want)
	}
}
