// Package kuberay is the KubeRay backend: it runs a compiled
// [placement.Plan] on Kubernetes through KubeRay's custom resources, each
// holding a RayCluster with one TPU worker group per slice group of the
// plan:
//
//   - a train or data plan as a RayJob ([Render], [Backend.Run]);
//   - a Serve plan as a RayService whose serveConfigV2 is the compiled
//     Serve config byte for byte, with the replica runtime added to
//     py_modules when a deployment owns TPU slices ([RenderService],
//     [serveConfigV2], [replicaRuntimeMountPath], and the
//     [backend.Server] methods [Backend.Deploy], [Backend.Wait],
//     [Backend.Status] and [Backend.Delete]);
//   - a slice plan as a plain RayCluster ([RenderCluster], [Backend.Up],
//     [Backend.WaitCluster], [Backend.Down]).
//
// [RenderPlan] and [Backend.ApplyPlan] pick the object by the plan's kind
// (raytpu render and raytpu apply use them). A local working_dir travels
// in a ConfigMap of at most 1 MiB mounted into every Ray container
// ([PackWorkingDir], [WorkingDirMountPath]), zipped by the packager the
// Ray backend uses (package runtimeenv/packaging): the same files are
// shipped, and a symbolic link out of the directory, a link loop or a
// FIFO, socket or device file is refused with the same error.
//
// Every object is checked before anything is sent ([validateJob],
// [validateService], [validateCluster]): every rule KubeRay, its CRD
// schema or GKE's TPU webhook would enforce later comes back at once as
// field errors with manifest paths. [marshalYAML] and [marshalJSON] print
// objects byte-identically from run to run. [RenderManifests] renders
// what kubectl apply needs to run a plan (the ConfigMaps its pods mount,
// then the object), [MarshalManifestsYAML] prints them as one stream, and
// [ApplyManifest] applies such a stream.
//
// Objects are server-side applied under the field manager "raytpu" and
// carry the label app.kubernetes.io/managed-by=raytpu; a retried apply of
// the same plan changes nothing, and deletes touch only objects that carry
// the label ([ErrNotManaged]). Status is followed by watching the objects,
// never by polling in a loop.
//
// Every plan is checked before anything is packed or sent
// (backend.CheckPlan): a kind the call does not take is
// backend.ErrUnsupported, a malformed plan a *backend.InvalidPlanError
// with its field errors. The backend's own errors match the contract's
// neutral sentinels: [ErrAlreadyExists] is backend.ErrAlreadyExists, an
// object of the name that raytpu did not create matches it too when
// applying, and [ErrLocalWorkingDir] matches backend.ErrUnsupported. The
// backend passes backend/backendtest on the real apiserver and operator
// (TestConformance).
//
// [Options.Autoscaling] renders Ray's in-tree autoscaler
// (enableInTreeAutoscaling, autoscalerOptions) and lets each TPU worker
// group scale between its min and max slices, a replica being one whole
// slice of numOfHosts pods; [Autoscaling] says which autoscaler version
// Ray 2.60 runs and what it reads for TPU, and package sim's
// PredictAutoscaling what it will do for a plan. Before a job runs on an
// existing RayCluster ([Options.Cluster]), [Backend.ReadClusterSlices]
// reads the cluster's TPU worker groups and autoscaler ([ClusterSlices])
// for that prediction, as `raytpu apply --ray-cluster` does.
//
// Options are sealed and validated ([CheckOptions]): New and
// NewWithClient return the error of the first invalid one.
//
// Not yet supported: local py_modules and local working_dirs of single
// Serve deployments ([ErrLocalWorkingDir]), and job logs.
//
// kuberay is the only package of the module that imports k8s.io and
// sigs.k8s.io packages.
package kuberay
