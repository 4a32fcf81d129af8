package kuberay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// sliceReply is what examples/serve's model answers.
type sliceReply struct {
	Y         []float64 `json:"y"`
	HostSum   float64   `json:"host_sum"`
	Devices   int       `json:"devices"`
	Processes int       `json:"processes"`
	Replica   string    `json:"replica"`
	Hosts     []struct {
		NodeID string            `json:"node_id"`
		NodeIP string            `json:"node_ip"`
		Labels map[string]string `json:"labels"`
	} `json:"hosts"`
}

// A Serve application whose deployment owns a v4 2x2x2 slice, deployed
// with the KubeRay backend, serves from KubeRay's pods: KubeRay's own
// dashboard client sends serveConfigV2 to the RayCluster's head (through
// the pod runner's cluster DNS), the replica runtime shipped in the
// RayService's ConfigMap imports in the pods, the replica reserves one
// intact slice (its slice placement group's bundles on the two TPU pods of
// one worker group, after the TPU-v4-16-head reservation), the RayService
// becomes Ready, and a request through the Serve Service (<name>-serve-svc)
// is answered by examples/serve's model, one JAX program over both hosts. Then a change of the
// deployment's user_config alone is applied in place: the same RayCluster
// serves the new config while requests keep being answered. Last, a
// second replica, whose slice is a worker group appended to the RayCluster
// spec, is added as KubeRay v1.5.0 decides (to the active RayCluster, in
// place) while the first replica keeps answering every request. Then the
// second replica's slice is preempted as GKE reclaims spot capacity: the
// first replica answers while it is gone, and the lost replica reserves
// the slice again once KubeRay recreates its pods (loseReplicaSlice).
func TestServiceServesOnKubeRay(t *testing.T) {
	env := kubetest.SharedPods(t)
	t.Logf("pod-running control plane started in %v", kubetest.SharedPodsStartDuration())
	ctx := t.Context()
	ns := env.Namespace(t)
	code, err := os.ReadFile(filepath.Join("..", "examples", "serve", "model", "linear.py"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "linear.py"), code, 0o644); err != nil {
		t.Fatal(err)
	}
	const name = "linear"
	app := func(bias float64, replicas int) *placement.Plan {
		return compileApp(t, serve.Application{
			Name: name, RoutePrefix: "/" + name, ImportPath: "linear:app",
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work, EnvVars: map[string]string{"JAX_PLATFORMS": "cpu"}},
			Deployments: []serve.Deployment{{
				Name: "Linear", NumReplicas: serveconfig.ReplicaCount(replicas),
				UserConfig: map[string]any{"w": 3.0, "b": bias},
				// One request at a time per replica: see step 3.
				MaxOngoingRequests: 1,
				RayActorOptions:    &serve.RayActorOptions{NumCPUs: new(0.0)},
				AcceleratorConfig:  &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2"},
			}},
		})
	}
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	rec := recordService(t, env, ns, name, began)
	defer rec.stop()
	defer func() {
		if t.Failed() {
			logServeApps(t, env, ns, name)
			logSubmitter(t, env, ns, name)
		}
	}()

	// Step 1: deploy and wait for Ready.
	if _, err := b.Deploy(ctx, app(2, 1)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%6.1fs Deploy returned", time.Since(began).Seconds())
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	st, err := b.Wait(waitCtx, name, backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) {
		t.Logf("%6.1fs Wait: %s %s", time.Since(began).Seconds(), s.State, s.Message)
	}})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	ready := time.Since(began)
	t.Logf("%6.1fs RayService Ready: %s", ready.Seconds(), st.Message)
	svc := getService(t, env, ns, name)
	active := svc.Status.ActiveServiceStatus.RayClusterName
	if active == "" || svc.Status.PendingServiceStatus.RayClusterName != "" {
		t.Fatalf("active RayCluster %q, pending %q; want one active and none pending", active, svc.Status.PendingServiceStatus.RayClusterName)
	}
	if c := findCondition(svc.Status.Conditions, string(rayv1.RayServiceReady)); c == nil || c.Status != "True" {
		t.Errorf("Ready condition %+v, want True", c)
	}
	var rc rayv1.RayCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: active}, &rc); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: kuberay.ReplicaRuntimeConfigMapName(name)}, &cm); err != nil {
		t.Errorf("the replica runtime's ConfigMap: %v", err)
	} else if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != svc.UID {
		t.Errorf("the replica runtime's ConfigMap is owned by %+v, want the RayService %s", cm.OwnerReferences, svc.UID)
	}

	web := &http.Client{Transport: &http.Transport{DialContext: env.Pods.DialContext}, Timeout: time.Minute}
	url := fmt.Sprintf("http://%s-serve-svc.%s.svc.cluster.local:8000/%s", name, ns, name)
	r, err := askService(web, url)
	if err != nil {
		t.Fatalf("a request through the serve Service: %v", err)
	}
	t.Logf("%6.1fs answer through %s: %+v", time.Since(began).Seconds(), url, r)
	// y = 3x + 2 over the slice's 8 devices; hosts contribute 1 and 2.
	if !slices.Equal(r.Y, []float64{5, 8}) || r.HostSum != 3 || r.Processes != 2 || r.Devices != 8 {
		t.Errorf("answer %+v, want y [5 8] and host sum 3 from a 2-process JAX program over 8 devices", r)
	}
	checkSliceHosts(t, env, ns, active, r)
	checkSlicePlacement(t, web, ns, active, r)

	// Step 2: a user_config change alone (the bias) is applied in place.
	load := startLoad(web, url, 1)
	time.Sleep(3 * time.Second) // requests answered before the change
	changed := time.Now()
	if _, err := b.Deploy(ctx, app(4, 1)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%6.1fs Deploy of bias 4 returned", time.Since(began).Seconds())
	waitFor(t, 5*time.Minute, "answers with bias 4", func() (bool, string) {
		last := load.lastReply()
		return slices.Equal(last.Y, []float64{7, 10}), fmt.Sprintf("last answer %+v, %s", last, load)
	})
	applied := time.Since(changed)
	t.Logf("%6.1fs the first answer with bias 4 came %v after the Deploy", time.Since(began).Seconds(), applied.Round(time.Millisecond))
	time.Sleep(3 * time.Second) // requests answered after the change
	load.stop()
	t.Logf("requests during the change: %s", load)
	if load.failed.Load() != 0 || load.ok.Load() == 0 {
		t.Errorf("requests during the config change: %s; want every one answered", load)
	}
	svc = getService(t, env, ns, name)
	if got := svc.Status.ActiveServiceStatus.RayClusterName; got != active || svc.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("after the config change: active %q pending %q, want %s kept and none pending", got, svc.Status.PendingServiceStatus.RayClusterName, active)
	}
	var clusters rayv1.RayClusterList
	if err := env.Client.List(ctx, &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(clusters.Items) != 1 || clusters.Items[0].UID != rc.UID {
		t.Errorf("%d RayClusters after the config change, want only %s (uid %s)", len(clusters.Items), active, rc.UID)
	}
	if st, err := b.Wait(waitCtx, name, backend.WaitOptions{}); err != nil || st.State != backend.ServiceRunning {
		t.Errorf("after the config change: %v %v, want RUNNING", st, err)
	}

	// Step 3: a second replica needs a second slice, a worker group
	// appended to the RayCluster spec. KubeRay v1.5.0 adds it to the
	// active RayCluster in place; the first replica keeps answering.
	// Serve's proxy sends a request first to a replica on its own node
	// when it has one free (its local-node routing), and a replica's
	// orchestrator (0 CPUs) may run on the head, where the Serve Service's
	// proxy is: one request at a time would then only ever reach that
	// replica. Three senders against max_ongoing_requests 1 keep it busy,
	// so the proxy must route to the other replica once it runs.
	load = startLoad(web, url, 3)
	time.Sleep(2 * time.Second)
	grown := time.Now()
	if _, err := b.Deploy(ctx, app(4, 2)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%6.1fs Deploy of 2 replicas returned", time.Since(began).Seconds())
	waitForOrExplain(t, 8*time.Minute, "answers from two replicas", func() (bool, string) {
		return len(load.replicaSlices()) == 2, fmt.Sprintf("replicas answering %v, %s", load.replicaSlices(), load)
	}, func() string { return serveReplicas(web, ns, active) })
	t.Logf("%6.1fs the second replica answered %v after the Deploy", time.Since(began).Seconds(), time.Since(grown).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	load.stop()
	t.Logf("requests during the worker group change: %s; replicas %v", load, load.replicaSlices())
	if load.failed.Load() != 0 {
		t.Errorf("requests during the worker group change: %s; want every one answered", load)
	}
	slicesHeld := map[string]bool{}
	for _, s := range load.replicaSlices() {
		slicesHeld[s] = true
	}
	if len(slicesHeld) != 2 {
		t.Errorf("the two replicas hold slices %v, want two slices", load.replicaSlices())
	}
	svc = getService(t, env, ns, name)
	clusters = rayv1.RayClusterList{}
	if err := env.Client.List(ctx, &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters.Items {
		t.Logf("RayCluster %s (uid %s, same as before: %v): %d worker groups", c.Name, c.UID, c.UID == rc.UID, len(c.Spec.WorkerGroupSpecs))
	}
	if got := svc.Status.ActiveServiceStatus.RayClusterName; got != active || len(clusters.Items) != 1 || len(clusters.Items[0].Spec.WorkerGroupSpecs) != 2 {
		t.Errorf("after the worker group change: active %q, %d RayClusters; want %s updated in place to 2 worker groups", got, len(clusters.Items), active)
	}

	// Step 4: the second replica's slice is preempted.
	preempted := time.Now()
	loseReplicaSlice(t, env, web, url, ns, active, began)
	t.Logf("%6.1fs the slice preemption step took %v", time.Since(began).Seconds(), time.Since(preempted).Round(time.Millisecond))
	rec.stop()
	t.Logf("test ran %v; Ready after %v", time.Since(began).Round(time.Millisecond), ready.Round(time.Millisecond))
}

// askService asks the model for x = [1, 2] and decodes the answer.
func askService(web *http.Client, url string) (sliceReply, error) {
	var r sliceReply
	resp, err := web.Post(url, "application/json", strings.NewReader(`{"x": [1, 2]}`))
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("POST %s = %d %.300s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("POST %s: %w: %.300s", url, err, body)
	}
	return r, nil
}

// checkSliceHosts checks that the replica's hosts are the two pods of one
// TPU worker group of RayCluster cluster, in worker-id order.
func checkSliceHosts(t *testing.T, env *kubetest.Env, ns, cluster string, r sliceReply) {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster}); err != nil {
		t.Fatal(err)
	}
	byIP := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		byIP[p.Status.PodIP] = p
	}
	if len(r.Hosts) != 2 {
		t.Fatalf("the replica lists %d hosts, want 2", len(r.Hosts))
	}
	groups := map[string]bool{}
	seen := map[string]bool{}
	for rank, h := range r.Hosts {
		p, ok := byIP[h.NodeIP]
		if !ok {
			t.Errorf("host %d at %s is no pod of RayCluster %s", rank, h.NodeIP, cluster)
			continue
		}
		t.Logf("host %d: pod %s (group %s), TPU worker %s of slice %s", rank, p.Name, p.Labels["ray.io/group"],
			h.Labels["ray.io/tpu-worker-id"], h.Labels["ray.io/tpu-slice-name"])
		groups[p.Labels["ray.io/group"]] = true
		seen[p.Name] = true
		if p.Labels["ray.io/node-type"] != "worker" || p.Spec.Containers[0].Resources.Limits.Name("google.com/tpu", "").Value() != 4 {
			t.Errorf("host %d on pod %s (%s), want a worker with 4 TPU chips", rank, p.Name, p.Labels["ray.io/node-type"])
		}
		if h.Labels["ray.io/tpu-worker-id"] != fmt.Sprint(rank) || h.Labels["ray.io/tpu-pod-type"] != "v4-16" ||
			h.Labels["ray.io/tpu-slice-name"] != r.Hosts[0].Labels["ray.io/tpu-slice-name"] {
			t.Errorf("host %d labels %v, want TPU worker %d of the v4-16 slice of host 0", rank, h.Labels, rank)
		}
	}
	if len(groups) != 1 || len(seen) != 2 {
		t.Errorf("the replica's hosts are on pods %v of groups %v, want two pods of one worker group", seen, groups)
	}
}

// checkSlicePlacement reads the placement groups from the head's dashboard
// (through cluster DNS, as KubeRay reaches it): the replica's slice group
// has one bundle on each of its hosts, and a TPU-v4-16-head reservation
// is held on the slice's host 0.
func checkSlicePlacement(t *testing.T, web *http.Client, ns, cluster string, r sliceReply) {
	t.Helper()
	dash, err := ray.NewClient(fmt.Sprintf("http://%s-head-svc.%s.svc.cluster.local:8265", cluster, ns), ray.WithHTTPClient(web))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := dash.PlacementGroups(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var hostNodes []string
	for _, h := range r.Hosts {
		hostNodes = append(hostNodes, h.NodeID)
	}
	slices.Sort(hostNodes)
	var sliceGroup, headGroup bool
	for _, pg := range groups {
		if pg.State != "CREATED" {
			continue
		}
		var nodes []string
		for _, b := range pg.Bundles {
			nodes = append(nodes, b.NodeID)
		}
		t.Logf("placement group %q: bundles on nodes %v, %+v", pg.Name, nodes, pg.Bundles)
		switch {
		case pg.Name == r.Replica:
			slices.Sort(nodes)
			sliceGroup = slices.Equal(nodes, hostNodes)
		case len(pg.Bundles) == 1 && pg.Bundles[0].Resources["TPU-v4-16-head"] == 1:
			headGroup = len(r.Hosts) > 0 && nodes[0] == r.Hosts[0].NodeID
		}
	}
	if !strings.HasPrefix(r.Replica, rayruntime.SliceGroupName("linear", "Linear", "")) || !sliceGroup {
		t.Errorf("the replica's slice group %q has no bundle on each of its hosts %v", r.Replica, hostNodes)
	}
	if !headGroup {
		t.Errorf("no TPU-v4-16-head reservation held on the slice's host 0")
	}
}
