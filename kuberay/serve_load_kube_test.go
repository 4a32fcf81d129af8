package kuberay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
)

// The Serve-on-KubeRay test's helpers: a request load, a recorder of the
// RayService's status and events, and what Serve says of an application.

// load sends requests from a number of senders, each one request after
// another, until stopped, counting answers and failures.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	last       sliceReply
	replicas   map[string]string // replica -> slice name
	firstErr   error
	cancel     context.CancelFunc
	done       chan struct{}
}

func startLoad(web *http.Client, url string, senders int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, done: make(chan struct{}), replicas: map[string]string{}}
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() { l.send(ctx, web, url) })
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

func (l *load) send(ctx context.Context, web *http.Client, url string) {
	for ctx.Err() == nil {
		r, err := askService(web, url)
		l.mu.Lock()
		if err != nil {
			l.failed.Add(1)
			if l.firstErr == nil {
				l.firstErr = err
			}
		} else {
			l.ok.Add(1)
			l.last = r
			if len(r.Hosts) > 0 {
				l.replicas[r.Replica] = r.Hosts[0].Labels["ray.io/tpu-slice-name"]
			}
		}
		l.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
}

func (l *load) lastReply() sliceReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// replicaSlices maps each replica that answered to its slice.
func (l *load) replicaSlices() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.replicas)
}

func (l *load) stop() { l.cancel(); <-l.done }

func (l *load) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d answered, %d failed (first failure: %v)", l.ok.Load(), l.failed.Load(), l.firstErr)
}

// serviceRecorder logs, with the time since began, each change of a
// RayService's status (conditions, active and pending RayCluster, service
// status) and each Event of its namespace (KubeRay's
// UpdatedServeApplications says when it sent serveConfigV2).
type serviceRecorder struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func recordService(t *testing.T, env *kubetest.Env, ns, name string, began time.Time) *serviceRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	rec := &serviceRecorder{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rec.done)
		var last string
		events := map[string]int32{}
		for ctx.Err() == nil {
			var svc rayv1.RayService
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err == nil {
				var conds []string
				for _, c := range svc.Status.Conditions {
					conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
				}
				s := fmt.Sprintf("status %s, conditions %v, active %q pending %q", svc.Status.ServiceStatus, conds,
					svc.Status.ActiveServiceStatus.RayClusterName, svc.Status.PendingServiceStatus.RayClusterName)
				if s != last {
					t.Logf("%6.1fs RayService %s", time.Since(began).Seconds(), s)
					last = s
				}
			}
			var evs corev1.EventList
			if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err == nil {
				for _, e := range evs.Items {
					if events[e.Name] != e.Count {
						events[e.Name] = e.Count
						t.Logf("%6.1fs event %s %s/%s: %s (count %d)", time.Since(began).Seconds(), e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message, e.Count)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return rec
}

func (r *serviceRecorder) stop() { r.once.Do(func() { r.cancel(); <-r.done }) }

// logServeApps logs what the RayService's status and the head's Serve
// REST API say of the applications (the messages of a failed deploy).
func logServeApps(t *testing.T, env *kubetest.Env, ns, name string) {
	svc := getService(t, env, ns, name)
	for _, st := range []rayv1.RayServiceStatus{svc.Status.ActiveServiceStatus, svc.Status.PendingServiceStatus} {
		for app, a := range st.Applications {
			t.Logf("RayCluster %s application %s: %s %s", st.RayClusterName, app, a.Status, a.Message)
			for d, ds := range a.Deployments {
				t.Logf("  deployment %s: %s %s", d, ds.Status, ds.Message)
			}
		}
		if st.RayClusterName == "" {
			continue
		}
		web := &http.Client{Transport: &http.Transport{DialContext: env.Pods.DialContext}, Timeout: 30 * time.Second}
		resp, err := web.Get(fmt.Sprintf("http://%s-head-svc.%s.svc.cluster.local:8265/api/serve/applications/", st.RayClusterName, ns))
		if err != nil {
			t.Logf("Serve REST API of %s: %v", st.RayClusterName, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("Serve REST API of %s: %d %.6000s", st.RayClusterName, resp.StatusCode, body)
		logReplicaLogs(t, web, ns, st.RayClusterName, body)
	}
}

// logReplicaLogs logs the last lines of every replica's Serve log, read
// through the head's dashboard (Ray's log API), from details, the Serve
// REST API's answer: what a replica raised is there and nowhere else.
func logReplicaLogs(t *testing.T, web *http.Client, ns, cluster string, details []byte) {
	var d struct {
		Applications map[string]struct {
			Deployments map[string]struct {
				Replicas []struct {
					NodeID  string `json:"node_id"`
					LogFile string `json:"log_file_path"`
				} `json:"replicas"`
			} `json:"deployments"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(details, &d); err != nil {
		return
	}
	for _, a := range d.Applications {
		for _, dep := range a.Deployments {
			for _, r := range dep.Replicas {
				q := url.Values{"node_id": {r.NodeID}, "filename": {strings.TrimPrefix(r.LogFile, "/")}, "lines": {"80"}}
				resp, err := web.Get(fmt.Sprintf("http://%s-head-svc.%s.svc.cluster.local:8265/api/v0/logs/file?%s", cluster, ns, q.Encode()))
				if err != nil {
					t.Logf("log %s: %v", r.LogFile, err)
					continue
				}
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
				resp.Body.Close()
				t.Logf("log %s (HTTP %d), last lines:\n%s", r.LogFile, resp.StatusCode, body)
			}
		}
	}
}

// serveReplicas summarises what the Serve REST API of RayCluster cluster
// says of each deployment: its status and message, and each replica's
// state and node.
func serveReplicas(web *http.Client, ns, cluster string) string {
	resp, err := web.Get(fmt.Sprintf("http://%s-head-svc.%s.svc.cluster.local:8265/api/serve/applications/", cluster, ns))
	if err != nil {
		return fmt.Sprintf("Serve REST API of %s: %v", cluster, err)
	}
	defer resp.Body.Close()
	var details struct {
		Applications map[string]struct {
			Status      string `json:"status"`
			Deployments map[string]struct {
				Status   string `json:"status"`
				Message  string `json:"message"`
				Replicas []struct {
					ReplicaID string `json:"replica_id"`
					State     string `json:"state"`
					NodeIP    string `json:"node_ip"`
				} `json:"replicas"`
			} `json:"deployments"`
		} `json:"applications"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&details); err != nil {
		return fmt.Sprintf("Serve REST API of %s: %d, %v", cluster, resp.StatusCode, err)
	}
	var b strings.Builder
	for _, app := range slices.Sorted(maps.Keys(details.Applications)) {
		a := details.Applications[app]
		fmt.Fprintf(&b, "Serve says application %s %s", app, a.Status)
		for _, d := range slices.Sorted(maps.Keys(a.Deployments)) {
			dep := a.Deployments[d]
			fmt.Fprintf(&b, "; deployment %s %s %.400q, replicas:", d, dep.Status, dep.Message)
			for _, r := range dep.Replicas {
				fmt.Fprintf(&b, " %s %s on %s", r.ReplicaID, r.State, r.NodeIP)
			}
		}
	}
	return b.String()
}
