package kuberay

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/tpu"
)

// Why a queued RayJob waits, read from Kueue's own objects with the
// dynamic client (raytpu imports no Kueue module): the job's Workload
// (label kueue.x-k8s.io/job-uid, else its ownerReference), its LocalQueue
// and that queue's ClusterQueue.

// Kueue's API (v1beta2, the storage version of Kueue v0.17).
var (
	workloadsGVR     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	localQueuesGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	clusterQueuesGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
)

// labelJobUID is the label Kueue puts on a job's Workload.
const labelJobUID = "kueue.x-k8s.io/job-uid"

// queuedPrefix starts the status message of an object Kueue keeps
// waiting: "queued by Kueue: ClusterQueue team-a-cq, needs 8
// google.com/tpu, 8 in use; <Kueue's own reason>".
const queuedPrefix = "queued by Kueue: "

// queued reports whether job waits in a Kueue queue: it names one and is
// suspended (Kueue resumes it when it admits it).
func queued(job *rayv1.RayJob) bool {
	_, ok := job.Labels[labelQueueName]
	return ok && job.Spec.Suspend
}

// jobStatus is jobStatusOf(job), and for a RayJob that waits in a Kueue
// queue a pending status saying why (queueMessage). A queued RayJob that
// KubeRay still reports Suspended once Kueue resumed it is pending too,
// not stopped: Kueue admitted it and KubeRay is about to start it.
func (b *Backend) jobStatus(ctx context.Context, job *rayv1.RayJob) backend.Status {
	st := jobStatusOf(job)
	_, labeled := job.Labels[labelQueueName]
	switch {
	case queued(job):
		st.State = backend.StatePending
		st.Message = b.queueMessage(ctx, job.Namespace, job.UID, job.Labels[labelQueueName])
	case labeled && job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspended:
		st.State = backend.StatePending
		st.Message += ": admitted by Kueue, resuming"
	}
	return st
}

// queueMessage says why the queued object of namespace ns with UID uid
// (a RayJob or RayCluster in LocalQueue lq) waits, from its Workload, its
// LocalQueue and their ClusterQueue; what cannot be read is left out.
func (b *Backend) queueMessage(ctx context.Context, ns string, uid any, lq string) string {
	if b.dyn == nil {
		return queuedPrefix + "LocalQueue " + lq + " (the backend has no dynamic client to read Kueue's Workload: make it with New)"
	}
	wl, err := b.workloadOf(ctx, ns, uid)
	if err != nil {
		return queuedPrefix + "LocalQueue " + lq + " (reading its Workload: " + err.Error() + ")"
	}
	if wl == nil {
		return queuedPrefix + "LocalQueue " + lq + ", no Workload yet (Kueue makes one for each queued object when its ray.io/rayjob and ray.io/raycluster integrations are on)"
	}
	cqName := b.clusterQueueOf(ctx, ns, wl, lq)
	var cq *unstructured.Unstructured
	if cqName != "" {
		cq, _ = b.dyn.Resource(clusterQueuesGVR).Get(ctx, cqName, metav1.GetOptions{})
	}
	return workloadWaitMessage(wl, lq, cqName, cq)
}

// workloadOf is the Workload of the job with UID uid in namespace ns: the
// one labeled with the UID, else the one the job owns; nil when there is
// none yet.
func (b *Backend) workloadOf(ctx context.Context, ns string, uid any) (*unstructured.Unstructured, error) {
	id := fmt.Sprint(uid)
	wls := b.dyn.Resource(workloadsGVR).Namespace(ns)
	list, err := wls.List(ctx, metav1.ListOptions{LabelSelector: labelJobUID + "=" + id, Limit: 10})
	if err != nil {
		return nil, err
	}
	if len(list.Items) > 0 {
		return &list.Items[0], nil
	}
	list, err = wls.List(ctx, metav1.ListOptions{Limit: 500})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if string(ref.UID) == id {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// clusterQueueOf is the ClusterQueue of Workload wl: the one that admitted
// it, else its LocalQueue's (spec.clusterQueue); "" when unknown.
func (b *Backend) clusterQueueOf(ctx context.Context, ns string, wl *unstructured.Unstructured, lq string) string {
	if cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue"); cq != "" {
		return cq
	}
	if q, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName"); q != "" {
		lq = q
	}
	obj, err := b.dyn.Resource(localQueuesGVR).Namespace(ns).Get(ctx, lq, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	cq, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterQueue")
	return cq
}

// workloadWaitMessage words why Workload wl waits: "queued by Kueue:
// ClusterQueue cq, needs 8 google.com/tpu, 8 in use; <the message of its
// QuotaReserved condition>". The resource named is google.com/tpu when the
// Workload asks for TPUs, else the first it asks for; "in use" is the
// ClusterQueue's reservation of it (nothing when cq is nil: it could not
// be read).
func workloadWaitMessage(wl *unstructured.Unstructured, lq, cqName string, cq *unstructured.Unstructured) string {
	var parts []string
	if cqName != "" {
		parts = append(parts, "ClusterQueue "+cqName)
	} else {
		parts = append(parts, "LocalQueue "+lq)
	}
	needs := workloadRequests(wl)
	if name := neededResource(needs); name != "" {
		q := needs[name]
		s := "needs " + q.String() + " " + name
		if cq != nil {
			used := clusterQueueReserved(cq, name)
			s += ", " + used.String() + " in use"
		}
		parts = append(parts, s)
	}
	msg := queuedPrefix + strings.Join(parts, ", ")
	if why := quotaReservedMessage(wl); why != "" {
		msg += "; " + why
	}
	return msg
}

// workloadRequests sums what Workload wl asks for over its PodSets:
// status.resourceRequests (Kueue's totals) when set, else count × the
// requests of each PodSet's template containers.
func workloadRequests(wl *unstructured.Unstructured) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	add := func(name string, v any, times int64) {
		s, ok := v.(string)
		if !ok {
			if n, ok := v.(int64); ok {
				s = fmt.Sprint(n)
			}
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return
		}
		if times != 1 {
			q = *resource.NewMilliQuantity(q.MilliValue()*times, q.Format)
		}
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	if rrs, ok, _ := unstructured.NestedSlice(wl.Object, "status", "resourceRequests"); ok && len(rrs) > 0 {
		for _, rr := range rrs {
			m, _ := rr.(map[string]any)
			res, _, _ := unstructured.NestedMap(m, "resources")
			for name, v := range res {
				add(name, v, 1)
			}
		}
		return out
	}
	podSets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	for _, ps := range podSets {
		m, _ := ps.(map[string]any)
		count, _, _ := unstructured.NestedInt64(m, "count")
		ctrs, _, _ := unstructured.NestedSlice(m, "template", "spec", "containers")
		for _, c := range ctrs {
			cm, _ := c.(map[string]any)
			req, _, _ := unstructured.NestedMap(cm, "resources", "requests")
			for name, v := range req {
				add(name, v, count)
			}
		}
	}
	return out
}

// neededResource is the resource a wait message names: google.com/tpu when
// asked for, else the first of needs by name; "" for none.
func neededResource(needs map[string]resource.Quantity) string {
	if q, ok := needs[tpu.ResourceGKETPU]; ok && !q.IsZero() {
		return tpu.ResourceGKETPU
	}
	names := make([]string, 0, len(needs))
	for n, q := range needs {
		if !q.IsZero() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// clusterQueueReserved is how much of resource name ClusterQueue cq has
// reserved for the Workloads it admitted, over all its flavors
// (status.flavorsReservation).
func clusterQueueReserved(cq *unstructured.Unstructured, name string) resource.Quantity {
	var sum resource.Quantity
	flavors, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
	for _, f := range flavors {
		fm, _ := f.(map[string]any)
		res, _, _ := unstructured.NestedSlice(fm, "resources")
		for _, r := range res {
			rm, _ := r.(map[string]any)
			if n, _, _ := unstructured.NestedString(rm, "name"); n != name {
				continue
			}
			if s, _, _ := unstructured.NestedString(rm, "total"); s != "" {
				if q, err := resource.ParseQuantity(s); err == nil {
					sum.Add(q)
				}
			}
		}
	}
	return sum
}

// quotaReservedMessage is the message of Workload wl's QuotaReserved
// condition while it is not True (Kueue's reason: "couldn't assign
// flavors to pod set ...: insufficient unused quota ..."), "" otherwise.
func quotaReservedMessage(wl *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	i := slices.IndexFunc(conds, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["type"] == "QuotaReserved"
	})
	if i < 0 {
		return ""
	}
	m, _ := conds[i].(map[string]any)
	if m["status"] == "True" {
		return "quota reserved, waiting for admission"
	}
	msg, _ := m["message"].(string)
	return strings.TrimSpace(msg)
}

// queuePollInterval is how often WaitJob reads again why a queued RayJob
// waits: Kueue's objects change (another job finishes, quota frees up)
// while the RayJob itself does not.
const queuePollInterval = 2 * time.Second

// jobReporter calls onStatus with every status of RayJob name that
// differs from the one before, from the watch (seen) and, while the
// RayJob waits in a Kueue queue, from a poll of Kueue's objects.
type jobReporter struct {
	b        *Backend
	name     string
	onStatus func(backend.Status)

	mu   sync.Mutex
	last backend.Status
	job  *rayv1.RayJob
}

// seen reports the status of job, as the watch saw it.
func (r *jobReporter) seen(ctx context.Context, job *rayv1.RayJob) {
	r.mu.Lock()
	r.job = job
	r.mu.Unlock()
	r.report(ctx, job, r.b.jobStatus(ctx, job))
}

// report reports st, the status of job, unless the watch has seen a newer
// RayJob since.
func (r *jobReporter) report(ctx context.Context, job *rayv1.RayJob, st backend.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job != job || st.State == r.last.State && st.Message == r.last.Message {
		return
	}
	r.last = st
	r.b.logger.DebugContext(ctx, "kuberay: RayJob status", "rayjob", r.name, "state", st.State, "message", st.Message)
	if r.onStatus != nil {
		r.onStatus(st)
	}
}

// watchQueue reads again, every queuePollInterval, why the last RayJob
// seen waits while it is queued; the function it returns stops it.
func (r *jobReporter) watchQueue(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(queuePollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.mu.Lock()
			job := r.job
			r.mu.Unlock()
			if job == nil || !queued(job) {
				continue
			}
			if st := r.b.jobStatus(ctx, job); ctx.Err() == nil {
				r.report(ctx, job, st)
			}
		}
	}()
	return func() { cancel(); <-done }
}
