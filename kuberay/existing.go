package kuberay

import (
	"fmt"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// A RayJob on an existing RayCluster (Options.Cluster) names the cluster
// in spec.clusterSelector, as KubeRay v1.5.0 reads it: the label
// clusterSelectorKey with the RayCluster's name. KubeRay then creates no
// cluster and deletes none when the job ends, and its submitter Job runs
// `ray job submit` against the cluster's dashboard. A packed working_dir
// cannot be mounted into the pods of a cluster that exists already: its
// ConfigMap is mounted into the submitter pod instead, and the job's
// working_dir is the zip's path there, which `ray job submit` uploads to
// the cluster (Ray's upload_working_dir_if_needed takes a local .zip) and
// every node then fetches, as it would from a user's `ray job submit`.

// clusterSelectorKey is the label of spec.clusterSelector that names the
// RayCluster a RayJob runs on (KubeRay's RayJobClusterSelectorKey).
const clusterSelectorKey = "ray.io/cluster"

// submitterTemplate is the submitter pod of a RayJob on an existing
// cluster that ships a packed working_dir: KubeRay's default submitter
// (its container name, requests and limits, restartPolicy Never) with the
// working_dir's ConfigMap mounted; KubeRay fills in the `ray job submit`
// command and its environment.
func submitterTemplate(o settings, job string) *corev1ac.PodTemplateSpecApplyConfiguration {
	image := defaultImage(o.RayVersion, o.PythonVersion)
	if o.Image != "" {
		image = o.Image
	}
	t := corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithContainers(corev1ac.Container().WithName(submitterContainer).WithImage(image).
			WithResources(corev1ac.ResourceRequirements().
				WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")}).
				WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}))))
	mountWorkingDir(t, job)
	return t
}

// onExistingCluster sets spec to run on the existing cluster o.Cluster,
// with the submitter pod that ships wd when there is one.
func onExistingCluster(spec *rayv1ac.RayJobSpecApplyConfiguration, o settings, wd *WorkingDir) {
	spec.WithClusterSelector(map[string]string{clusterSelectorKey: o.Cluster})
	if wd != nil && wd.remote == "" {
		spec.WithSubmitterPodTemplate(submitterTemplate(o, o.Name))
	}
}

// submittedPath is where the submitter pod sees the packed working_dir:
// a local path, which `ray job submit` uploads.
func (w *WorkingDir) submittedPath() string {
	return fmt.Sprintf("%s/%s", WorkingDirMountPath, w.Key())
}
