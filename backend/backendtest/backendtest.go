package backendtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
)

// Backend is a backend under test: what it implements, the plans it runs,
// and what the suite may expect of it. Runner, Server or both must be set;
// the rules of an unset one are skipped.
type Backend struct {
	// Name is the name the backend gives itself in Outcome.Backend and
	// ServiceStatus.Backend ("sim", "ray", "kuberay"). Required.
	Name string
	// Runner is checked against the Runner rules, if set.
	Runner backend.Runner
	// Server is checked against the Server rules, if set.
	Server backend.Server
	// RunKinds are the kinds of plans Runner runs; it must refuse the
	// others with ErrUnsupported. Optional. Default: every kind that runs
	// to completion (placement.Kind.RunsToCompletion).
	RunKinds []placement.Kind
	// JobPlan returns a new valid plan of kind k (one of RunKinds) named
	// name, which Runner runs to its end. Optional. Default: the package's
	// JobPlan.
	JobPlan func(name string, k placement.Kind) *placement.Plan
	// AppPlan returns a new valid Serve application plan named name (its
	// Serve config named name too), which Server deploys. Optional.
	// Default: the package's AppPlan.
	AppPlan func(name string) *placement.Plan
	// KeepsRuns says that Runner keeps its runs by RunOptions.SubmissionID
	// (a Ray job, a RayJob), so that it can tell a retry from a second
	// plan under a taken id: the suite then requires ErrAlreadyExists for
	// the second plan. A backend that keeps nothing (the simulator) runs
	// it. Optional. Default: false.
	KeepsRuns bool
	// ControlPlaneOnly says that nothing can run inside the backend's
	// clusters (KubeRay on an apiserver with no kubelet and no Ray in its
	// pods): valid runs end FAILED or STOPPED (a RayJob's deadline) with a
	// *backend.RunError, and applications never leave DEPLOYING, so Wait
	// must end with its context as a *backend.ServiceError. Optional.
	// Default: false: runs end SUCCEEDED (SIMULATED on a backend that runs
	// nothing) and applications become RUNNING (or SIMULATED).
	ControlPlaneOnly bool
	// Patience bounds each wait of the suite: for an application to be
	// RUNNING, and to be gone after Delete. Optional. Default: 5 minutes.
	Patience time.Duration
}

// withDefaults fills the optional fields.
func (b Backend) withDefaults() (Backend, error) {
	if b.Name == "" {
		return b, errors.New("backendtest: Backend.Name is required: the name the backend reports in Outcome.Backend")
	}
	if b.Runner == nil && b.Server == nil {
		return b, errors.New("backendtest: Backend.Runner or Backend.Server is required: the suite checks what the backend implements")
	}
	if b.RunKinds == nil {
		b.RunKinds = backend.RunKinds()
	}
	if b.JobPlan == nil {
		b.JobPlan = JobPlan
	}
	if b.AppPlan == nil {
		b.AppPlan = AppPlan
	}
	if b.Patience <= 0 {
		b.Patience = 5 * time.Minute
	}
	return b, nil
}

func (b *Backend) runs(k placement.Kind) bool { return slices.Contains(b.RunKinds, k) }

// reporter is what the suite's rules report to: a *testing.T, or a
// recorder in the suite's own tests.
type reporter interface {
	Helper()
	Context() context.Context
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(f func())
}

// rule is one rule of the contract, checked on its own fresh backend.
type rule struct {
	name  string
	needs string // "Runner" or "Server"
	check func(t reporter, b *Backend, name namer)
}

// rules lists every rule the suite checks, in the order of the package doc.
func rules() []rule {
	return []rule{
		{"Runner/RunsValidPlans", "Runner", runsValidPlans},
		{"Runner/SubmissionIDTaken", "Runner", submissionIDTaken},
		{"Runner/RefusesBeforeDoingAnything", "Runner", runnerRefuses},
		{"Runner/ContextDone", "Runner", runnerContextDone},
		{"Server/DeployFollowDelete", "Server", deployFollowDelete},
		{"Server/UnknownNames", "Server", unknownNames},
		{"Server/RefusesBeforeDoingAnything", "Server", serverRefuses},
		{"Server/ContextDone", "Server", serverContextDone},
	}
}

// Run checks the backend that newBackend returns against every rule of the
// contract, each rule in a parallel subtest of its own, named
// Runner/<rule> or Server/<rule>; the rules of an interface the backend
// does not implement are not run (Run logs which). newBackend is called
// once with Run's t to see what the backend implements, then once per
// subtest with that subtest's t: return a fresh backend, or one shared by all
// (a real cluster): every name the suite uses is new, made of a random
// prefix, so runs on a long-lived cluster never meet those of an earlier
// Run.
//
// A nil t has nowhere to report, and Run returns at once; a nil newBackend
// fails t.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	if t == nil {
		return
	}
	t.Helper()
	if newBackend == nil {
		t.Fatal("backendtest.Run: nil newBackend: pass a func returning the Backend under test")
	}
	prefix := newPrefix()
	// What the backend implements decides which rules are its contract: a
	// backend that only serves has no Runner rules to pass. One that
	// implements neither has nothing to check, which is a mistake.
	probe := newBackend(t)
	if probe.Runner == nil && probe.Server == nil {
		t.Fatalf("backend %s has neither a Runner nor a Server", probe.Name)
	}
	for i, r := range rules() {
		if r.needs == "Runner" && probe.Runner == nil || r.needs == "Server" && probe.Server == nil {
			t.Logf("backend %s has no %s: rule %s is not part of its contract", probe.Name, r.needs, r.name)
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			b, err := newBackend(t).withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			r.check(t, &b, namer{prefix: prefix, rule: i})
		})
	}
}

// namer makes the names of one rule's plans and runs: short DNS-1035
// labels (a KubeRay object name, a Ray job id, a Serve route), unique to
// the rule and the Run.
type namer struct {
	prefix string
	rule   int
}

func (n namer) name(tag string) string {
	return n.prefix + "-" + string(rune('a'+n.rule)) + "-" + tag
}

// newPrefix is "bt" and 6 random hex digits.
func newPrefix() string {
	var b [3]byte
	rand.Read(b[:])
	return "bt" + hex.EncodeToString(b[:])
}

// kindTag is a kind as part of a name: lower case.
func kindTag(k placement.Kind) string { return strings.ToLower(string(k)) }
