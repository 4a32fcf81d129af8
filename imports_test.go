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
var backends = []string{module + "/ray", module + "/sim", module + "/kuberay", module + "/backend"}

var rules = []rule{
	{module + "/field", []string{module + "/"}, "field is a leaf of the module"},
	{module + "/rayvocab", []string{module + "/"}, "rayvocab is a leaf of the module"},
	{module + "/tpu", append(append([]string{module + "/placement", module + "/internal", module + "/cmd"}, frontEnds...), backends...), "tpu imports only field and rayvocab"},
	{module + "/placement", append(append([]string{module + "/internal", module + "/cmd"}, frontEnds...), backends...), "placement imports no front end or backend"},
	{module + "/train", append([]string{module + "/serve", module + "/data", module + "/cmd"}, backends...), "front ends never import each other or a backend"},
	{module + "/serve", append([]string{module + "/train", module + "/data", module + "/cmd"}, backends...), "front ends never import each other or a backend"},
	{module + "/data", append([]string{module + "/train", module + "/serve", module + "/cmd"}, backends...), "front ends never import each other or a backend"},
}

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
		if strings.HasPrefix(imp, "k8s.io/") && !strings.HasPrefix(pkg, module+"/kuberay") && !strings.HasPrefix(pkg, module+"/backend/kuberay") {
			out = append(out, pkg+" imports "+imp+": only the kuberay backend may import k8s.io packages")
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
		{module + "/placement", module + "/tpu", false},
		{module + "/train", module + "/ray", true},
		{module + "/train", module + "/serve", true},
		{module + "/train", module + "/placement", false},
		{module + "/serve", module + "/data", true},
		{module + "/sim", "k8s.io/client-go/kubernetes", true},
		{module + "/kuberay", "k8s.io/client-go/kubernetes", false},
		{module + "/ray", module + "/placement", false},
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
