// Package backend is the contract between raytpu's front ends and the
// places a compiled plan runs.
//
// Front ends (train, serve, data) compile a workload to a
// [placement.Plan] and hand it to a backend through the interfaces here,
// mirroring Ray's verbs: train.JaxTrainer.Fit(ctx, r, nil) is trainer.fit(),
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
//	raybackend  a real Ray cluster through its dashboard (Jobs and Serve
//	            REST APIs)
//	kuberay     Kubernetes through KubeRay (RayJob, RayService)
//
// Swapping one backend value for another is the only change a program
// needs to move between them.
//
// # Writing a backend
//
// The contract is open, as database/sql's driver contract is: a platform
// team's backend (one that runs plans through its own job queue, or
// records and replays them; see examples/custombackend) implements Runner,
// Server or both, and keeps these rules, which package
// [github.com/raytpu/raytpu/backend/backendtest] checks and documents one
// by one:
//
//   - every plan goes through [CheckPlan] first: a kind the call does not
//     run is ErrUnsupported, a malformed plan an *InvalidPlanError
//     (ErrInvalidPlan) with a field error per broken rule, and neither
//     does anything;
//   - errors match the neutral sentinels ErrNotFound, ErrAlreadyExists,
//     ErrInvalidPlan and ErrUnsupported with errors.Is, whatever the
//     backend's own error types: a backend's own sentinels are these
//     values or wrap them, and a transport's errors (the ray client's
//     ray.ErrNotFound) are translated where the backend calls it;
//   - outcomes, statuses and their errors (*RunError, *PlacementError,
//     *ServiceError) mean the same on every backend.
//
// backend imports placement, field and the standard library only: front
// ends import it without importing any backend, and backends import no
// front end.
package backend
