// Package kuberay is the KubeRay backend: it runs a compiled
// [placement.Plan] on Kubernetes through KubeRay's custom resources, each
// holding a RayCluster with one TPU worker group per slice group of the
// plan:
//
//   - a train or data plan as a RayJob ([Backend.Run], [Backend.Apply]);
//   - a Serve plan as a RayService whose serveConfigV2 is the compiled
//     Serve config byte for byte, with the replica runtime added to
//     py_modules when a deployment owns TPU slices (the [backend.Server]
//     methods [Backend.Deploy], [Backend.Wait], [Backend.Status] and
//     [Backend.Delete]);
//   - a slice plan as a plain RayCluster ([Backend.Up],
//     [Backend.WaitCluster], [Backend.Down]).
//
// [Render] renders any plan as the [Manifests] kubectl apply needs: the
// object its kind runs as and the ConfigMaps its pods mount, typed, which
// [Manifests.YAML] and [Manifests.JSON] print byte-identically from run to
// run; [Backend.ApplyPlan] applies a plan as the object of its kind, and
// [Backend.ApplyManifest] a printed stream ([DecodeManifests]). raytpu
// render and raytpu apply use them. A local working_dir travels in a
// ConfigMap of at most 1 MiB mounted into every Ray container
// ([PackWorkingDir], [WorkingDirMountPath]), zipped by the packager the
// Ray backend uses (package runtimeenv/packaging): the same files are
// shipped, and a symbolic link out of the directory, a link loop or a
// FIFO, socket or device file is refused with the same error; with
// [Options].PackageBucket it goes to Cloud Storage instead, uploaded once
// under Ray's content-addressed package name ([Manifests.Upload]). Pods
// share no disk: a run of several hosts whose Ray Train storage_path is a
// local directory is refused before anything is created, unless the plan
// declares it a shared mount (placement.Storage).
//
// One type per role: [Options] are how a backend renders every plan
// (namespace, image, versions, deadline, autoscaling, an existing
// cluster), [RenderInput] what differs per rendered object (its name).
// One function holds every rule of Options: [CheckOptions], New (through
// [WithOptions]) and every render call it, so they cannot disagree; its
// errors are field errors below the root "options" in the options' json
// spelling (options.autoscaling.minSlices), as are Render's errors below
// "input". Every object is then checked before anything is sent: every
// rule KubeRay, its CRD schema or GKE's TPU webhook would enforce later
// comes back at once as field errors with manifest paths.
//
// Every exported function and method returns an error for nil, typed-nil,
// zero and negative input (a nil *Backend, a nil context, a nil plan, a
// negative bound), never panics. Every request to the apiserver made by a
// Backend from New fails when the server has not begun to answer within
// 30 s, and every call honours its context's deadline.
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
// neutral sentinels: a name taken matches backend.ErrAlreadyExists (an
// object of the name that raytpu did not create matches it too when
// applying), and [ErrLocalWorkingDir] matches backend.ErrUnsupported. The
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
// Each [Option] of New is sealed and validated: New and NewWithClient
// return the error of the first invalid one.
//
// Not yet supported: local py_modules and local working_dirs of single
// Serve deployments ([ErrLocalWorkingDir]), and job logs.
//
// kuberay is the only package of the module that imports k8s.io and
// sigs.k8s.io packages.
package kuberay
