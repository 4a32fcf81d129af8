package kuberay

import (
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/raytpu/raytpu/field"
)

// Queueing with Kueue (Options.Queue). Kueue admits a RayJob or a
// RayCluster that carries label kueue.x-k8s.io/queue-name once its
// LocalQueue's ClusterQueue has quota for every pod of it (all or
// nothing), by setting spec.suspend to false; until then the object stays
// suspended and KubeRay creates no pod. Kueue's mutating webhook would
// suspend a labeled object on create and its validating webhook refuse
// the shapes it cannot queue; a cluster may run Kueue without them, so
// raytpu renders spec.suspend: true itself and checks those rules before
// anything is sent (validateQueued), as Kueue v0.17's webhooks check them.

// labelQueueName is the label that puts an object in a Kueue LocalQueue of
// its namespace.
const labelQueueName = "kueue.x-k8s.io/queue-name"

// Kueue turns a RayCluster into a Workload of at most 8 PodSets: the head
// and one per worker group, so at most 7 worker groups (its webhook's
// limit). A RayJob in K8sJobMode (raytpu's) adds its submitter pod as one
// more PodSet, which leaves 6.
const (
	maxQueuedClusterGroups = 7
	maxQueuedJobGroups     = 6
	// headPodSet is the PodSet Kueue names after the head group.
	headPodSet = "head"
)

// queueErrors holds the rules of Options.Queue that need no plan: a name
// Kueue accepts for a LocalQueue (a label value that is also a DNS-1123
// subdomain), and no option Kueue would refuse beside it.
func (o Options) queueErrors(root *field.Path) field.ErrorList {
	if o.Queue == "" {
		return nil
	}
	var errs field.ErrorList
	if msg := queueNameError(o.Queue); msg != "" {
		errs = append(errs, field.Invalid(root.Child("queue"), o.Queue, msg))
	}
	if o.Cluster != "" {
		errs = append(errs, field.Forbidden(root.Child("cluster"),
			"Kueue does not queue a RayJob on an existing RayCluster (spec.clusterSelector): leave options.queue empty, or let the job create its own cluster"))
	}
	if o.Autoscaling != nil && o.Cluster == "" { // with Cluster, validate reports it
		errs = append(errs, field.Forbidden(root.Child("autoscaling"),
			"Kueue admits a fixed number of pods and refuses a queued object with Ray's autoscaler (enableInTreeAutoscaling) unless it is an elastic job (alpha feature gate ElasticJobsViaWorkloadSlices), which raytpu does not render: leave options.queue or options.autoscaling empty"))
	}
	return errs
}

// queueNameError says what is wrong with q as the name of a LocalQueue in
// label kueue.x-k8s.io/queue-name, "" when nothing is.
func queueNameError(q string) string {
	var msgs []string
	if strings.ContainsFunc(q, isControl) {
		return "the name of a Kueue LocalQueue has no control characters"
	}
	msgs = append(msgs, validation.IsValidLabelValue(q)...)
	for _, m := range validation.IsDNS1123Subdomain(q) {
		if !strings.Contains(strings.Join(msgs, "; "), m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return "the name of a Kueue LocalQueue in the namespace, carried as label " + labelQueueName +
		" (a label value and a DNS-1123 subdomain, e.g. team-a): " + strings.Join(msgs, "; ")
}

// queueJob puts a rendered RayJob in queue q (no queue: unchanged): the
// queue label, and spec.suspend: true for Kueue to release.
func queueJob(job *rayv1ac.RayJobApplyConfiguration, q string) {
	if q == "" {
		return
	}
	job.WithLabels(map[string]string{labelQueueName: q})
	job.Spec.WithSuspend(true)
}

// queueCluster puts a rendered RayCluster in queue q, as queueJob a RayJob.
func queueCluster(rc *rayv1ac.RayClusterApplyConfiguration, q string) {
	if q == "" {
		return
	}
	rc.WithLabels(map[string]string{labelQueueName: q})
	rc.Spec.WithSuspend(true)
}

// serviceQueueError refuses a queue for a RayService: Kueue v0.17 queues
// RayServices only through KubeRay v1.6's types (it reads
// RayService.spec.managedBy and suspends spec.rayClusterConfig.suspend),
// and raytpu renders for KubeRay v1.5.0.
func serviceQueueError(q string) field.ErrorList {
	if q == "" {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("options", "queue"),
		"a Serve application's RayService cannot be queued: Kueue v0.17 queues RayServices only with KubeRay v1.6's types (spec.managedBy, spec.rayClusterConfig.suspend), and raytpu renders for KubeRay v1.5.0; deploy it without a queue")}
}

// validateQueuedJob checks a RayJob that names a Kueue queue against what
// Kueue's RayJob webhook and controller need (nothing for a RayJob
// without the label): a valid queue name, spec.suspend true (created
// suspended; Kueue resumes it), shutdownAfterJobFinishes true (the
// cluster would hold the quota after the job), its own cluster and no
// clusterSelector, and the rules of validateQueuedCluster for its
// cluster, with at most 6 worker groups.
func validateQueuedJob(job *rayv1ac.RayJobApplyConfiguration) field.ErrorList {
	q, ok := job.Labels[labelQueueName]
	if !ok || job.Spec == nil {
		return nil
	}
	errs := queueLabelErrors(q)
	s, spec := job.Spec, field.NewPath("spec")
	if !deref(s.Suspend) {
		errs = append(errs, field.Invalid(spec.Child("suspend"), deref(s.Suspend), "a queued RayJob is created suspended (true): Kueue resumes it once admitted, and KubeRay would start its pods before that otherwise"))
	}
	if len(s.ClusterSelector) > 0 {
		errs = append(errs, field.Forbidden(spec.Child("clusterSelector"), "Kueue does not queue a RayJob on an existing RayCluster: a queued RayJob creates its own (rayClusterSpec)"))
	}
	if s.RayClusterSpec == nil {
		return errs // validateJob requires rayClusterSpec
	}
	if !deref(s.ShutdownAfterJobFinishes) {
		errs = append(errs, field.Invalid(spec.Child("shutdownAfterJobFinishes"), deref(s.ShutdownAfterJobFinishes), "a queued RayJob deletes its cluster when it finishes (true), or the cluster keeps the queue's quota"))
	}
	limit := maxQueuedClusterGroups
	if mode := s.SubmissionMode; mode == nil || *mode == rayv1.K8sJobMode {
		limit = maxQueuedJobGroups
	}
	return append(errs, queuedClusterErrors(s.RayClusterSpec, spec.Child("rayClusterSpec"), limit)...)
}

// validateQueuedCluster checks a RayCluster that names a Kueue queue:
// spec.suspend true, and the rules of queuedClusterErrors.
func validateQueuedCluster(rc *rayv1ac.RayClusterApplyConfiguration) field.ErrorList {
	q, ok := rc.Labels[labelQueueName]
	if !ok || rc.Spec == nil {
		return nil
	}
	errs := queueLabelErrors(q)
	spec := field.NewPath("spec")
	if !deref(rc.Spec.Suspend) {
		errs = append(errs, field.Invalid(spec.Child("suspend"), deref(rc.Spec.Suspend), "a queued RayCluster is created suspended (true): Kueue resumes it once admitted"))
	}
	return append(errs, queuedClusterErrors(rc.Spec, spec, maxQueuedClusterGroups)...)
}

// validateQueuedService refuses a RayService that names a Kueue queue (see
// serviceQueueError).
func validateQueuedService(svc *rayv1ac.RayServiceApplyConfiguration) field.ErrorList {
	if _, ok := svc.Labels[labelQueueName]; !ok {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(labelQueueName),
		"Kueue v0.17 queues RayServices only with KubeRay v1.6's types (spec.managedBy, spec.rayClusterConfig.suspend); raytpu deploys for KubeRay v1.5.0")}
}

// queueLabelErrors checks the value of the queue label.
func queueLabelErrors(q string) field.ErrorList {
	path := field.NewPath("metadata", "labels").Key(labelQueueName)
	if q == "" {
		return field.ErrorList{field.Required(path, "the name of a Kueue LocalQueue, or no label")}
	}
	if msg := queueNameError(q); msg != "" {
		return field.ErrorList{field.Invalid(path, q, msg)}
	}
	return nil
}

// queuedClusterErrors are the rules Kueue's webhook checks on the cluster
// of a queued object at path: no autoscaler (it admits a fixed size), at
// most limit worker groups (PodSets), none named "head".
func queuedClusterErrors(c *rayv1ac.RayClusterSpecApplyConfiguration, path *field.Path, limit int) field.ErrorList {
	var errs field.ErrorList
	if deref(c.EnableInTreeAutoscaling) {
		errs = append(errs, field.Forbidden(path.Child("enableInTreeAutoscaling"),
			"Kueue admits a fixed number of pods: no in-tree autoscaling on a queued object (Kueue allows it only for elastic jobs, an alpha feature raytpu does not render)"))
	}
	if n := len(c.WorkerGroupSpecs); n > limit {
		src := "Kueue: a Workload has at most 8 PodSets, the head's and one per worker group"
		if limit == maxQueuedJobGroups {
			src += ", and a RayJob's submitter"
		}
		errs = append(errs, field.TooMany(path.Child("workerGroupSpecs"), n, limit, src))
	}
	for i, g := range c.WorkerGroupSpecs {
		if deref(g.GroupName) == headPodSet {
			errs = append(errs, field.Forbidden(path.Child("workerGroupSpecs").Index(i).Child("groupName"), `"head" is the PodSet Kueue gives the head group`))
		}
	}
	return errs
}
