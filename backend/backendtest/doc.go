// Package backendtest is the conformance suite of the backend contract:
// every backend, the module's and yours, passes it, as database/sql
// drivers pass the same tests. A backend's test calls [Run] with a
// function that returns the backend under test:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backendtest.Backend {
//			spec, _ := sim.ParseSpec("v4-8,cpu:1") // a host for the suite's job plans
//			c, err := sim.NewCluster(spec)         // a fresh backend per rule
//			if err != nil {
//				t.Fatal(err)
//			}
//			return backendtest.Backend{Name: sim.BackendName, Runner: c, Server: c}
//		})
//	}
//
// The rules below are the contract; they are written for someone writing a
// backend, and each is one subtest of Run.
//
// # Every call
//
//  1. Refuse before doing anything. Call [backend.CheckPlan] first, with
//     the kinds the call runs: a plan of another kind is an error matching
//     backend.ErrUnsupported; a nil or malformed plan is an error matching
//     backend.ErrInvalidPlan that carries a [field.Error] per broken rule
//     (field.Errors finds them), with paths such as plan.job.entrypoint.
//     Rules of your own (a feature you do not have yet, a part of the plan
//     your runtime cannot read) come next, with the same two sentinels:
//     ErrUnsupported for what another backend may run unchanged,
//     ErrInvalidPlan for what no backend could. A refused plan leaves
//     nothing behind: no run under its id, no application under its name,
//     no status reported, no log written.
//  2. Honour the context. A call whose context has ended returns an error
//     matching the context's error, and no result.
//  3. Match the neutral sentinels. Your own errors may be your own types,
//     but they match backend.ErrNotFound, ErrAlreadyExists,
//     ErrInvalidPlan and ErrUnsupported where these apply (wrap them with
//     %w, give your type an Is method, or make your sentinel the same
//     value: kuberay.ErrAlreadyExists is backend.ErrAlreadyExists).
//     Errors of a transport (ray.ErrNotFound from the dashboard client)
//     are translated at the backend's edge.
//
// # A Runner (Runner/...)
//
//   - RunsValidPlans: Run of a valid plan of a kind it runs returns an
//     *Outcome whose Backend is the backend's name and whose ID is
//     RunOptions.SubmissionID. The run ends SUCCEEDED with no error (a
//     backend that runs nothing: SIMULATED, Ran false); one that ends
//     FAILED or STOPPED returns the outcome with a *backend.RunError.
//     RunOptions.OnStatus sees every state, the last one included. A Run
//     retried with the same SubmissionID and the same plan reports the
//     same run (Ray: the job already submitted is followed, never
//     submitted twice).
//   - SubmissionIDTaken: a backend that keeps its runs by id
//     ([Backend.KeepsRuns]: a Ray job, a RayJob) refuses another plan
//     under a taken id with backend.ErrAlreadyExists and no outcome; one
//     that keeps nothing (the simulator) runs it.
//   - RefusesBeforeDoingAnything: rule 1 for Run, with every malformed
//     plan the suite makes (no job, no entrypoint, an unknown kind, ...)
//     and a plan of every kind the Runner does not run ([Backend.RunKinds];
//     a Runner runs plans that run to completion: Serve applications go to
//     a Server, bare slice plans are reserved by other means). After them,
//     a valid plan takes the same run id.
//   - ContextDone: rule 2 for Run.
//
// # A Server (Server/...)
//
//   - DeployFollowDelete: Deploy of a valid application plan returns its
//     status (Backend, Name, a State). Deploy is declarative: a second
//     Deploy of the same plan succeeds and changes nothing. Status reads
//     it; Wait follows it to RUNNING (SIMULATED), calling
//     WaitOptions.OnStatus with what it sees, or, when its context ends
//     first, returns a *backend.ServiceError holding the last status.
//     Delete removes one application and leaves every other; Status of a
//     deleted application is backend.ErrNotFound once it is gone, and a
//     second Delete is backend.ErrNotFound.
//   - UnknownNames: Status, Wait and Delete of a name never deployed are
//     backend.ErrNotFound. A Server never answers ErrAlreadyExists for a
//     name of its own: deploying a changed plan under a name updates that
//     application.
//   - RefusesBeforeDoingAnything: rule 1 for Deploy, with every malformed
//     application plan and a plan of every other kind; Status of the
//     refused plan's name is then backend.ErrNotFound.
//   - ContextDone: rule 2 for Deploy; nothing is deployed.
//
// # The backend under test
//
// [Backend] says what to check. By default the suite runs its own plans
// ([JobPlan], [AppPlan], [SlicePlan]): a job that prints a line holding
// one v4 2x2x1 slice (give a simulated cluster a free v4-8 host for it)
// and a Serve application with nothing to import. A backend that really
// runs Serve applications supplies an AppPlan whose code it can import;
// one whose clusters run nothing ([Backend.ControlPlaneOnly]: KubeRay on a
// bare apiserver) has its runs checked to end FAILED and its applications
// to stay DEPLOYING until Wait's context ends.
//
// Every rule runs in a parallel subtest of its own, on the backend that
// the function given to Run returns for it, with names of its own (a
// random prefix per Run), so the suite may share a long-lived cluster.
//
// backendtest imports package testing, backend, placement and field; never
// a backend or a front end.
package backendtest
