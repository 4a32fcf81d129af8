// Package raybackend runs compiled plans on a real Ray cluster through its
// dashboard: it implements backend.Runner on top of the ray dashboard
// client.
//
// A plan whose job runs raytpu's launcher (a JaxTrainer, say) is shipped
// as Ray ships any job: the plan's local working_dir is packaged with the
// launcher script and the plan itself at its root, uploaded unless the
// cluster already has it, and submitted under a submission_id fixed before
// the first attempt, so a retried submit never starts the job twice. The
// launcher builds the real Ray library object inside Ray, runs it and
// reports the outcome on one line of the driver's log, which Run reads
// back into the backend.Outcome.
//
//	client, _ := ray.NewClient("http://127.0.0.1:8265")
//	b, _ := raybackend.New(client)
//	res, err := trainer.Fit(ctx, b, nil)
//
// A plan of a Serve application is deployed through the dashboard's Serve
// REST API (backend.Server): Deploy uploads local working_dir and
// py_modules first, since Serve takes only remote URIs; Wait follows the
// application to RUNNING and diagnoses it from the cluster's own state
// (placement groups, nodes, replica actors) in the simulator's words, both
// when it stays DEPLOYING past WaitOptions.StuckAfter and when it became
// RUNNING on TPU bundles spread over several slices; Delete removes one
// application and leaves the others running.
//
// Every plan is checked before anything is packaged or sent
// (backend.CheckPlan, then the backend's own rules): a kind the call does
// not run is backend.ErrUnsupported, a malformed plan a
// *backend.InvalidPlanError with its field errors. Errors of the ray
// client are also the contract's neutral ones: a job or application that
// does not exist matches backend.ErrNotFound, a submission id taken by
// another plan backend.ErrAlreadyExists. The backend passes
// backend/backendtest on a real cluster (TestConformanceOnRealRay).
//
// Options are sealed and validated: New returns the error of the first
// invalid one.
//
// raybackend imports the ray client, placement and backend; never a front
// end.
package raybackend
