package kuberay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
	"github.com/raytpu/raytpu/sim"
)

// serveScalesSlices deploys, through raybackend on the autoscaled
// RayCluster rc, a Serve application whose replicas each own a v4 2x2x2
// slice and whose replica count follows its load (Serve autoscaling, 1 to
// 2 replicas): the slices follow the replicas. It first waits for the
// group below two slices. The first replica takes a slice the group has,
// or makes the autoscaler add one; under load Serve adds a second
// replica, whose slice reservation makes the autoscaler take the group to
// two slices (the simulator's prediction for the application's plan, its
// two replica slices), and both replicas answer, each on its own slice.
// When the load stops Serve goes back to one replica, and the autoscaler
// removes the hosts of the slice it released once they idle, while the
// replica that stays keeps its slice and answers. The group does not go
// down to one slice for that: autoscaler v1's KubeRay provider writes the
// pods it keeps (2) as the group's replicas, which were 2 already, so
// KubeRay starts a new replica in place of the deleted one, which idles
// in turn; a multi-host group shrinks only when all its hosts idle out
// together (to zero), as at the end of a job. The simulator predicts
// that (NoSingleSliceScaleDown), and the test checks it. The application
// is deleted at the end. fullLog is the autoscaler's whole log,
// autoscalerLog its tail for failure messages.
func serveScalesSlices(t *testing.T, env *kubetest.Env, ns string, rc *rayv1.RayCluster, group string, hosts int, idle time.Duration, fullLog, autoscalerLog func() string) {
	t.Helper()
	ctx := t.Context()
	name := rc.Name
	logFrom := len(fullLog())
	// The group below two slices, so that the second replica's slice is
	// one the autoscaler adds: the two-slice job's slices idle out
	// together, and the group goes to zero (or bounces back to two when
	// its hosts idled out in different iterations: see below); after the
	// minimum's interlude (minSlicesKeepHosts) it is at zero already.
	waited := time.Now()
	for groupReplicas(t, env, ns, name, group) >= 2 && time.Since(waited) < idle+time.Minute {
		time.Sleep(time.Second)
	}
	web := &http.Client{Transport: &http.Transport{DialContext: env.Pods.DialContext}, Timeout: time.Minute}
	headSvc := fmt.Sprintf("%s.%s.svc.cluster.local", rc.Status.Head.ServiceName, ns)
	dash, err := ray.NewClient("http://"+headSvc+":8265", ray.WithHTTPClient(web))
	if err != nil {
		t.Fatal(err)
	}
	// Wait's log says when it waits for the nodes the autoscaler starts.
	var waitLog lockedBuffer
	rb, err := raybackend.New(dash, raybackend.WithLogger(slog.New(slog.NewTextHandler(&waitLog, nil))))
	if err != nil {
		t.Fatal(err)
	}
	// Serve's proxy on the head only: a proxy actor on a TPU host would
	// be one more thing on the slice the test watches the autoscaler remove.
	if err := dash.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: "0.0.0.0", Port: 8000},
		Applications:  []json.RawMessage{},
	}); err != nil {
		t.Fatalf("starting Serve on the head of %s: %v", name, err)
	}

	code, err := os.ReadFile(filepath.Join("..", "examples", "serve", "model", "linear.py"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "linear.py"), code, 0o644); err != nil {
		t.Fatal(err)
	}
	const app = "autoscaled"
	plan := compileApp(t, serve.Application{
		Name: app, RoutePrefix: "/" + app, ImportPath: "linear:app",
		RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: work, EnvVars: map[string]string{"JAX_PLATFORMS": "cpu"}},
		Deployments: []serve.Deployment{{
			Name:       "Linear",
			UserConfig: map[string]any{"w": 3.0, "b": 2.0},
			// One request at a time per replica, a target of half a
			// request: the three senders keep one or more requests in
			// Serve (their round trips through the pod network take
			// longer than the model), which asks for two replicas or
			// more, capped at two; a target of one made Serve hover at
			// one replica for 1.5 to 3.5 minutes. Short delays
			// and window, so that the test waits on the slices, not on
			// Serve's defaults (30 s up, 600 s down).
			MaxOngoingRequests: 1,
			AutoscalingConfig: &serveconfig.AutoscalingConfig{
				MinReplicas: new(1), MaxReplicas: 2, TargetOngoingRequests: 0.5,
				UpscaleDelayS: new(0.0), DownscaleDelayS: new(5.0), LookBackPeriodS: 2,
			},
			RayActorOptions: &serve.RayActorOptions{NumCPUs: new(0.0)},
			// Long enough for the autoscaler to add a slice, its pods to
			// start and their Ray nodes to join, on a loaded machine.
			AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", HeadReservationTimeout: 8 * time.Minute},
		}},
	})
	now := groupReplicas(t, env, ns, name, group)
	t.Logf("Serve: the group at %d slices after a wait of %v", now, time.Since(waited).Round(time.Millisecond))
	spec := sim.Spec{Items: []sim.Item{{PodType: "v4-16", Topology: "2x2x2", Count: now, MinSlices: 0, MaxSlices: 2}}}
	pred := predictPlan(t, spec, plan, "the Serve application's two replica slices")
	full, err := sim.PredictAutoscaling(spec, plan, sim.AutoscalerV1)
	if err != nil {
		t.Fatal(err)
	}
	noScaleDown := ""
	for _, f := range full.Findings {
		if f.Code == sim.CodeNoSliceScaleDown {
			noScaleDown = f.Message
		}
	}
	if noScaleDown == "" {
		t.Fatalf("the prediction %+v does not say the group keeps two slices when one idles out", full.Findings)
	}

	watch, stopWatch := watchGroup(t, env, ns, name, group, 2*hosts)
	defer stopWatch()
	url := fmt.Sprintf("http://%s:8000/%s", headSvc, app)
	defer func() {
		if t.Failed() {
			t.Log(serveReplicas(web, ns, name))
		}
	}()
	// The group's new pods wait provisionDelay for a node, as on a node
	// pool that must first add one, and Wait diagnoses the application
	// from stuckAfter on, before the slice can be up: a slice head that
	// waits while the autoscaler starts the slice's nodes is not stuck,
	// and Wait goes on until the replica runs.
	const provisionDelay, stuckAfter = 40 * time.Second, 20 * time.Second
	groupPods := map[string]string{"ray.io/cluster": name, "ray.io/group": group}
	env.Pods.DelayScheduling(ns, groupPods, provisionDelay)
	deployed := time.Now()
	if _, err := rb.Deploy(ctx, plan); err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	st, err := rb.Wait(waitCtx, app, backend.WaitOptions{StuckAfter: stuckAfter})
	env.Pods.DelayScheduling(ns, groupPods, 0)
	if err != nil || st.State != backend.ServiceRunning {
		t.Fatalf("Wait: %+v %v\nWait's log:\n%s\nautoscaler:\n%s", st, err, waitLog.String(), autoscalerLog())
	}
	running := time.Since(deployed)
	said := waitLog.String()
	switch {
	case strings.Contains(said, "autoscaler is starting"):
		t.Logf("Serve: Wait (stuck after %v) went on while the autoscaler started nodes, each pod %v unscheduled:\n%s", stuckAfter, provisionDelay, said)
	case now == 0:
		t.Errorf("Serve: from zero slices the replica ran after %v (its pods %v unscheduled) and Wait, stuck after %v, never said it waited for the autoscaler's nodes", running.Round(time.Millisecond), provisionDelay, stuckAfter)
	default:
		t.Logf("Serve: the first replica took a slice the group had; Wait did not wait for the autoscaler")
	}
	first, err := askService(web, url)
	if err != nil {
		t.Fatalf("a request to the first replica: %v", err)
	}
	checkSliceHosts(t, env, ns, name, first)
	t.Logf("Serve: from %d slices, deploy → the first replica RUNNING on slice %s %v",
		now, first.Hosts[0].Labels["ray.io/tpu-slice-name"], running.Round(time.Millisecond))

	// Under load Serve wants a second replica; its slice reservation
	// makes the autoscaler add the group's second slice.
	load := startLoad(web, url, 3)
	loaded := time.Now()
	// When each set of Serve's replica states was first seen under load,
	// read once a second.
	var upSteps []string
	seenStates := map[string]bool{}
	var lastRead time.Time
	waitForOrExplain(t, 8*time.Minute, "answers from two replicas", func() (bool, string) {
		if time.Since(lastRead) >= time.Second {
			lastRead = time.Now()
			if d, err := dash.ServeApplications(ctx); err == nil {
				var states []string
				for _, r := range d.Applications[app].Deployments["Linear"].Replicas {
					states = append(states, string(r.State))
				}
				slices.Sort(states)
				if k := strings.Join(states, ","); !seenStates[k] {
					seenStates[k] = true
					upSteps = append(upSteps, fmt.Sprintf("%v [%s]", time.Since(loaded).Round(time.Second), k))
				}
			}
		}
		return len(load.replicaSlices()) == 2, fmt.Sprintf("replicas answering %v, %s", load.replicaSlices(), load)
	}, func() string { return serveReplicas(web, ns, name) + "\nautoscaler:\n" + autoscalerLog() })
	upscaled := time.Since(loaded)
	t.Logf("Serve: replica states under load, from the load's start: %s", strings.Join(upSteps, " → "))
	time.Sleep(2 * time.Second)
	load.stop()
	held := load.replicaSlices()
	sliceNames := map[string]bool{}
	for _, s := range held {
		sliceNames[s] = true
	}
	watch.mu.Lock()
	reached := int(watch.maxReplicas)
	watch.mu.Unlock()
	t.Logf("Serve: load → the second replica answered %v; replicas on slices %v; requests %s; the group reached %d replicas",
		upscaled.Round(time.Millisecond), held, load, reached)
	if load.failed.Load() != 0 {
		t.Errorf("requests while Serve scaled up: %s; want every one answered", load)
	}
	if len(sliceNames) != 2 || sliceNames[""] {
		t.Errorf("the two replicas hold slices %v, want two named slices", held)
	}
	if reached != 2 || pred.To != 2 {
		t.Errorf("the autoscaler took group %s to %d replicas for two Serve replicas; the simulator predicted %s", group, reached, pred)
	}
	if now >= 2 {
		t.Logf("the group was still at %d slices when the application came: this run proves that the replicas own slices of the autoscaled group, not that Serve's second replica scaled it", now)
	}

	// The load is gone: Serve stops one replica, and the slice it held
	// idles and is removed; the other replica keeps its slice.
	calm := time.Now()
	waitFor(t, 3*time.Minute, "Serve down to one running replica", func() (bool, string) {
		d, err := dash.ServeApplications(ctx)
		if err != nil {
			return false, err.Error()
		}
		var states []string
		for _, r := range d.Applications[app].Deployments["Linear"].Replicas {
			states = append(states, string(r.State))
		}
		return slices.Equal(states, []string{string(ray.ServeReplicaRunning)}), fmt.Sprintf("replicas %v", states)
	})
	downscaled := time.Since(calm)
	kept, err := askService(web, url)
	if err != nil {
		t.Fatalf("a request after Serve scaled down: %v", err)
	}
	keptPods := podsOf(t, env, ns, name, kept)
	var freed []string
	watch.mu.Lock()
	for pod := range watch.live {
		if !slices.Contains(keptPods, pod) {
			freed = append(freed, pod)
		}
	}
	watch.mu.Unlock()
	slices.Sort(freed)
	if len(freed) != hosts {
		t.Fatalf("after Serve scaled down, pods %v of the group hold no replica, want the %d pods of one slice (the replica that stays is on %v)", freed, hosts, keptPods)
	}
	waitFor(t, idle+3*time.Minute, "the autoscaler removed the slice Serve released", func() (bool, string) {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		for _, pod := range freed {
			if watch.live[pod] {
				return false, fmt.Sprintf("pod %s still there; replicas %d, pods %d", pod, watch.replicas, watch.pods)
			}
		}
		return true, ""
	})
	removed := time.Since(calm)
	watch.mu.Lock()
	for _, pod := range keptPods {
		if !watch.live[pod] {
			t.Errorf("pod %s of the replica that stays was removed", pod)
		}
	}
	watch.mu.Unlock()
	if again, err := askService(web, url); err != nil || again.Replica != kept.Replica {
		t.Errorf("after the released slice went: replica %q answered (%v), want %q on its slice still", again.Replica, err, kept.Replica)
	}
	after := groupReplicas(t, env, ns, name, group)
	t.Logf("Serve: load stopped → one replica %v → the released slice's pods %v removed %v (idle timeout %v); the group then asks for %d replicas",
		downscaled.Round(time.Millisecond), freed, removed.Round(time.Millisecond), idle, after)
	if after != 2 {
		t.Errorf("after the released slice's pods went the group asks for %d replicas; the simulator predicted 2: %s", after, noScaleDown)
	}
	stopWatch()
	log := fullLog()
	if len(log) >= logFrom {
		log = log[logFrom:]
	}
	for line := range strings.Lines(log) {
		if strings.Contains(line, "Launching") || strings.Contains(line, "Terminating the node") || strings.Contains(line, "event_summary") {
			t.Log("autoscaler: " + strings.TrimSpace(line))
		}
	}
	if err := rb.Delete(ctx, app); err != nil {
		t.Errorf("deleting the Serve application: %v", err)
	}
}

// podsOf is the names of the pods of RayCluster cluster whose IPs are the
// hosts a replica's answer lists.
func podsOf(t *testing.T, env *kubetest.Env, ns, cluster string, r sliceReply) []string {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range r.Hosts {
		for _, p := range pods.Items {
			if p.Status.PodIP == h.NodeIP && p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
	}
	if len(names) != len(r.Hosts) {
		t.Fatalf("replica %s's hosts %v are pods %v", r.Replica, r.Hosts, names)
	}
	return names
}
