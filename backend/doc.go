// Package backend is the contract between raytpu's front ends and the
// places a compiled plan runs.
//
// Front ends (train, serve, data) compile a workload to a
// [placement.Plan] and hand it to a backend through the interfaces here,
// mirroring Ray's verbs: train.JaxTrainer.Fit(ctx, r) is trainer.fit(),
// serve.Application.Run(ctx, s) is serve.run(app).
//
// Work that runs to completion (a training run, a data pipeline) goes
// through a [Runner]; services that run until deleted (a Serve
// application) through a [Server]. The two are separate because their
// lifecycles are: a run has one outcome, a service has a status that
// changes, and is updated and deleted by name.
// Backends implement them:
//
//	sim         the in-process simulated TPU cluster: places every slice
//	            group as Ray would and diagnoses it; runs nothing
//	raybackend  a real Ray cluster through its dashboard (Jobs API)
//	kuberay     Kubernetes through KubeRay (to come)
//
// Swapping one backend value for another is the only change a program
// needs to move between them.
//
// backend imports placement and the standard library only: front ends
// import it without importing any backend, and backends import no front
// end.
package backend
