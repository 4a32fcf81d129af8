package raytpu_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/raytpu/raytpu"

// rule forbids a package (by prefix) from importing any of the listed
// prefixes; allow lists exceptions inside the forbidden set.
type rule struct {
	pkg    string
	forbid []string
	why    string
}

var frontEnds = []string{module + "/train", module + "/serve", module + "/data"}

// backends are the implementations of the backend contract, and the
// transports they build on.
var backends = []string{module + "/ray", module + "/raybackend", module + "/sim", module + "/kuberay"}

func without(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}

func all(lists ...[]string) []string { return slices.Concat(lists...) }

var rules = []rule{
	{module + "/field", []string{module + "/"}, "field is a leaf of the module"},
	{module + "/rayvocab", []string{module + "/"}, "rayvocab is a leaf of the module"},
	{module + "/runtimeenv", all([]string{module + "/tpu", module + "/placement", module + "/backend", module + "/internal", module + "/cmd"}, frontEnds, backends), "runtimeenv imports only field"},
	{module + "/runtimeenv/packaging", []string{module + "/"}, "the working_dir packager is a leaf of the module, so that every backend can use it"},
	{module + "/serveconfig", all([]string{module + "/field", module + "/tpu", module + "/placement", module + "/backend", module + "/internal", module + "/cmd"}, frontEnds, backends), "serveconfig imports only runtimeenv, so that placement, front ends, backends and the ray transport share it"},
	{module + "/tpu", all([]string{module + "/placement", module + "/backend", module + "/runtimeenv", module + "/internal", module + "/cmd"}, frontEnds, backends), "tpu imports only field and rayvocab"},
	{module + "/placement", all([]string{module + "/backend", module + "/internal", module + "/cmd"}, frontEnds, backends), "placement imports no front end or backend"},
	{module + "/backend", all([]string{module + "/internal", module + "/cmd"}, frontEnds, backends), "the backend contract imports no backend and no front end"},
	{module + "/train", all([]string{module + "/serve", module + "/data", module + "/internal/raycluster", module + "/internal/cli", module + "/cmd"}, backends), "front ends never import each other or a backend (the backend contract is fine)"},
	{module + "/serve", all([]string{module + "/train", module + "/data", module + "/internal/raycluster", module + "/internal/cli", module + "/cmd"}, backends), "front ends never import each other or a backend (the backend contract is fine)"},
	{module + "/data", all([]string{module + "/train", module + "/serve", module + "/internal/raycluster", module + "/internal/cli", module + "/cmd"}, backends), "front ends never import each other or a backend (the backend contract is fine)"},
	{module + "/ray", all([]string{module + "/placement", module + "/backend", module + "/rayruntime", module + "/cmd"}, frontEnds, without(backends, module+"/ray")), "the ray dashboard client is a transport: it knows nothing of plans, backends, front ends or the runtime that runs inside Ray"},
	{module + "/rayruntime", all([]string{module + "/backend", module + "/internal", module + "/cmd", module + "/profiler", module + "/observe"}, frontEnds, backends), "the runtime package is shared by front ends (wire types) and every backend (files to ship): it imports no backend, front end or contract"},
	{module + "/raybackend", all([]string{module + "/cmd"}, frontEnds, without(backends, module+"/raybackend", module+"/ray")), "a backend imports no front end and no other backend"},
	{module + "/sim", all([]string{module + "/internal", module + "/cmd"}, frontEnds, without(backends, module+"/sim")), "a backend imports no front end and no other backend"},
	{module + "/kuberay", all([]string{module + "/cmd"}, frontEnds, without(backends, module+"/kuberay")), "a backend imports no front end and no other backend"},
	{module + "/serve/client", []string{module + "/"}, "the clients of served models speak HTTP and gRPC only: no front end, plan, backend or generated service of raytpu's"},
	{module + "/profiler", all([]string{module + "/placement", module + "/backend", module + "/internal/cli", module + "/cmd"}, frontEnds, backends), "profiler speaks gRPC to the worker and reads the runtime's report lines (rayruntime) only: no front end, backend, transport or plan"},
	{module + "/observe", all([]string{module + "/placement", module + "/backend", module + "/rayruntime", module + "/internal/cli", module + "/cmd"}, frontEnds, without(backends, module+"/ray")), "observe reads through the ray transport only: no front end, other backend, plan or runtime"},
}

// kubeOnly are import prefixes only the kuberay backend may use.
var kubeOnly = []string{"k8s.io/", "sigs.k8s.io/"}

func TestImportDirections(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range bytes.Lines(out) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		seen++
		for _, v := range violations(fields[0], fields[1:]) {
			t.Error(v)
		}
	}
	if seen < 3 {
		t.Fatalf("go list saw only %d packages; the check would be vacuous", seen)
	}
}

// violations lists the forbidden imports of pkg.
func violations(pkg string, imports []string) []string {
	var out []string
	for _, imp := range imports {
		if !(pkg == module+"/kuberay" || strings.HasPrefix(pkg, module+"/kuberay/")) &&
			slices.ContainsFunc(kubeOnly, func(p string) bool { return strings.HasPrefix(imp, p) }) {
			out = append(out, pkg+" imports "+imp+": only the kuberay backend may import k8s.io and sigs.k8s.io packages")
		}
		for _, r := range rules {
			if pkg != r.pkg && !strings.HasPrefix(pkg, r.pkg+"/") {
				continue
			}
			if imp == r.pkg || strings.HasPrefix(imp, r.pkg+"/") {
				continue
			}
			if slices.ContainsFunc(r.forbid, func(f string) bool {
				f = strings.TrimSuffix(f, "/")
				return imp == f || strings.HasPrefix(imp, f+"/")
			}) {
				out = append(out, pkg+" imports "+imp+": "+r.why)
			}
		}
	}
	return out
}

func TestImportRulesCatchViolations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pkg, imp string
		bad      bool
	}{
		{module + "/tpu", module + "/placement", true},
		{module + "/tpu", module + "/field", false},
		{module + "/field", module + "/tpu", true},
		{module + "/placement", module + "/sim", true},
		{module + "/backend/backendtest", module + "/sim", true},
		{module + "/backend/backendtest", module + "/placement", false},
		{module + "/placement", module + "/tpu", false},
		{module + "/train", module + "/ray", true},
		{module + "/train", module + "/serve", true},
		{module + "/train", module + "/placement", false},
		{module + "/serve", module + "/data", true},
		{module + "/sim", "k8s.io/client-go/kubernetes", true},
		{module + "/kuberay", "k8s.io/client-go/kubernetes", false},
		{module + "/ray", module + "/placement", true},
		{module + "/ray", module + "/rayruntime", true},
		{module + "/rayruntime", module + "/raybackend", true},
		{module + "/rayruntime", module + "/kuberay", true},
		{module + "/rayruntime", module + "/train", true},
		{module + "/rayruntime", module + "/backend", true},
		{module + "/rayruntime", module + "/placement", false},
		{module + "/rayruntime", module + "/serveconfig", false},
		{module + "/profiler", module + "/rayruntime", false},
		{module + "/observe", module + "/rayruntime", true},
		{module + "/ray", module + "/runtimeenv", false},
		{module + "/ray", module + "/serveconfig", false},
		{module + "/placement", module + "/serveconfig", false},
		{module + "/serveconfig", module + "/placement", true},
		{module + "/serveconfig", module + "/serve", true},
		{module + "/serveconfig", module + "/runtimeenv", false},
		{module + "/raybackend", module + "/rayruntime", false},
		{module + "/raybackend", module + "/ray", false},
		{module + "/raybackend", module + "/train", true},
		{module + "/raybackend", module + "/sim", true},
		{module + "/sim", module + "/train", true},
		{module + "/sim", module + "/backend", false},
		{module + "/sim", "sigs.k8s.io/controller-runtime", true},
		{module + "/kuberay", "sigs.k8s.io/controller-runtime", false},
		{module + "/kuberay", module + "/serve", true},
		{module + "/kuberay", module + "/rayruntime", false},
		{module + "/backend", module + "/sim", true},
		{module + "/backend", module + "/raybackend", true},
		{module + "/backend", module + "/placement", false},
		{module + "/train", module + "/backend", false},
		{module + "/train", module + "/raybackend", true},
		{module + "/train", module + "/rayruntime", false},
		{module + "/data", module + "/rayruntime", false},
		{module + "/placement", module + "/backend", true},
		{module + "/runtimeenv", module + "/placement", true},
		{module + "/observe", module + "/ray", false},
		{module + "/observe", module + "/raybackend", true},
		{module + "/observe", module + "/train", true},
		{module + "/runtimeenv", module + "/field", false},
		{module + "/rayvocab", module + "/field", true},
		{module + "/serve/client", module + "/raybackend", true},
		{module + "/serve/client", module + "/serve", true},
		{module + "/serve/client", "google.golang.org/grpc", false},
		{module + "/runtimeenv/packaging", module + "/field", true},
		{module + "/runtimeenv/packaging", module + "/ray", true},
		{module + "/runtimeenv/packaging", "k8s.io/client-go/kubernetes", true},
		{module + "/runtimeenv/packaging", "golang.org/x/sync/errgroup", false},
		{module + "/ray", module + "/runtimeenv/packaging", false},
		{module + "/kuberay", module + "/runtimeenv/packaging", false},
		{module + "/kuberay", module + "/ray", true},
	}
	for _, c := range cases {
		got := len(violations(c.pkg, []string{c.imp})) > 0
		if got != c.bad {
			t.Errorf("%s importing %s: violation = %v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}

// TestCommandDoesNotLinkTesting keeps test helpers out of the raytpu
// binary: a non-test package that imports "testing" drags the testing
// package (and its flags' code) into every program that uses it.
func TestCommandDoesNotLinkTesting(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "./cmd/raytpu").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/internal/raycluster") {
		t.Fatalf("cmd/raytpu no longer depends on internal/raycluster; the check would be vacuous (deps: %d)", len(deps))
	}
	if slices.Contains(deps, "testing") {
		t.Error(`cmd/raytpu links package "testing"; move test helpers into a package only tests import (e.g. internal/raycluster/raytest)`)
	}
}
