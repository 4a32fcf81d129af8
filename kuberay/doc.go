// Package kuberay is the KubeRay backend: it runs a compiled
// [placement.Plan] on Kubernetes as a KubeRay RayJob whose RayCluster holds
// one TPU worker group per slice group of the plan.
//
// [Render] turns a plan into a RayJob apply configuration (KubeRay's own
// Go types), checked by [Validate] before anything is sent: every rule
// KubeRay, its CRD schema or GKE's TPU webhook would enforce later comes
// back at once as field errors with manifest paths. [MarshalYAML] and
// [MarshalJSON] print it byte-identically from run to run.
//
// [Backend] implements [backend.Runner]: it server-side applies the RayJob
// under the field manager "raytpu" (a retried Run with the same
// SubmissionID applies the same object again) and follows the RayJob's
// status until KubeRay reports the job Complete or Failed.
//
// Not yet supported: a local working_dir (a remote URI passes through; see
// [ErrLocalWorkingDir]), job logs, and service plans.
//
// kuberay is the only package of the module that imports k8s.io and
// sigs.k8s.io packages.
package kuberay
