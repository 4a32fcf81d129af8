package raytpu_test

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/raytpu/raytpu"

// allowed lists, for every package of the module, the module's packages
// its code (not its tests) may import, with why. Packages outside the
// module are free, but k8s.io and sigs.k8s.io (kubeOnly). A package with
// no entry fails the test: a new package states its place here.
//
// The layers, from the bottom: field, rayvocab, runtimeenv and the
// catalog (tpu); placement, the compiled form; the backend contract and
// the Python runtime (rayruntime); the front ends (train, serve, data);
// the backends (sim, the ray transport and raybackend, kuberay); the
// command (cmd/raytpu over its own cmd/raytpu/internal/cli and progress);
// examples and benchmarks over the public packages. internal/raycluster,
// internal/tpuplugin and internal/pyenv are the local Ray cluster that
// `raytpu dev-cluster` and the tests start; internal/testinfra holds what
// only tests import (kubetest and podrunner, the kube test control plane,
// among them).
var allowed = map[string]struct {
	may []string
	why string
}{
	"":                                {nil, "the module's doc package imports nothing"},
	"field":                           {nil, "field is a leaf of the module"},
	"field/fieldfile":                 {[]string{"field"}, "fieldfile reads spec files into field errors only"},
	"rayvocab":                        {nil, "rayvocab is a leaf of the module"},
	"runtimeenv":                      {[]string{"field"}, "runtimeenv imports only field"},
	"runtimeenv/packaging":            {nil, "the working_dir packager is a leaf of the module, so that every backend can use it"},
	"serveconfig":                     {[]string{"runtimeenv"}, "serveconfig imports only runtimeenv, so that placement, front ends, backends and the ray transport share it"},
	"tpu":                             {[]string{"field", "rayvocab"}, "tpu imports only field and rayvocab"},
	"placement":                       {[]string{"field", "rayvocab", "runtimeenv", "serveconfig", "tpu"}, "placement imports no front end, backend or runtime"},
	"backend":                         {[]string{"field", "placement", "serveconfig"}, "the backend contract imports no backend, front end or runtime"},
	"backend/backendtest":             {[]string{"backend", "field", "placement", "serveconfig"}, "the conformance suite imports only the contract"},
	"rayruntime":                      {[]string{"placement", "runtimeenv", "serveconfig"}, "the Python runtime imports no front end, backend or contract (runtimeenv: it joins a Serve config's py_modules)"},
	"train":                           {frontEnd, "front ends never import each other or a backend (the backend contract is fine)"},
	"serve":                           {slices.Concat(frontEnd, serveInternal), "front ends never import each other or a backend (the backend contract is fine); serve's rules live in its own internal packages"},
	"serve/internal/freeform":         {[]string{"field"}, "the free-form value checks (cycles, depth, size) import only field"},
	"serve/internal/servecheck":       {[]string{"field", "placement", "runtimeenv", "serve/internal/freeform"}, "serve's deployment rules, shared by serve and serve/llm, import no front end or backend"},
	"data":                            {frontEnd, "front ends never import each other or a backend (the backend contract is fine)"},
	"sim":                             {[]string{"backend", "field", "field/fieldfile", "placement", "rayvocab", "tpu"}, "a backend imports no front end and no other backend"},
	"ray":                             {[]string{"runtimeenv", "runtimeenv/packaging", "serveconfig"}, "the ray dashboard client is a transport: it knows nothing of plans, backends, front ends or the runtime"},
	"ray/authtest":                    {nil, "ray/authtest is tests only"},
	"raybackend":                      {[]string{"backend", "field", "placement", "ray", "rayruntime", "rayvocab", "runtimeenv", "serveconfig", "tpu"}, "a backend imports no front end and no other backend but its transport"},
	"kuberay":                         {[]string{"backend", "field", "placement", "rayruntime", "rayvocab", "runtimeenv", "runtimeenv/packaging", "serveconfig", "tpu"}, "a backend imports no front end and no other backend"},
	"kuberay/kubesim":                 {[]string{"kuberay", "placement", "sim"}, "kubesim bridges the kuberay backend's reading of a cluster and the simulator's autoscaler prediction, which import no other backend"},
	"serve/llm":                       {slices.Concat(frontEnd, serveInternal, []string{"serve"}), "Serve LLM builds on serve's options and rules: it imports serve and what a front end may, never another front end or a backend"},
	"serve/client":                    {nil, "the clients of served models speak HTTP and gRPC only: no front end, plan, backend or generated service of raytpu's"},
	"serve/servev1":                   {nil, "the generated Predictor service imports nothing of raytpu's"},
	"profiler":                        {[]string{"field", "profiler/internal/tslpb", "rayruntime"}, "profiler speaks gRPC to the worker only: no front end, backend, transport or plan"},
	"profiler/internal/tslpb":         {nil, "generated protobuf code"},
	"observe":                         {[]string{"internal/nilness", "ray", "rayvocab"}, "observe reads through the ray transport only: no front end, other backend, plan or runtime"},
	"cmd/raytpu":                      {[]string{"cmd/raytpu/internal/cli"}, "the command is its CLI package"},
	"cmd/raytpu/internal/cli":         {cliMay, "the CLI uses the public packages and the local cluster, never test infrastructure"},
	"cmd/raytpu/internal/progress":    {nil, "progress is a leaf"},
	"internal/pyenv":                  {nil, "pyenv is a leaf"},
	"internal/nilness":                {nil, "nilness is a leaf"},
	"internal/batchmodel":             {nil, "the iter_jax_batches model behind data.Predict is a leaf"},
	"internal/tpuplugin":              {[]string{"rayvocab", "tpu"}, "the TPU device-plugin emulator knows only the catalog"},
	"internal/raycluster":             {[]string{"internal/pyenv", "internal/tpuplugin", "rayvocab", "sim"}, "the local cluster reads the simulator's cluster specs and nothing of the front ends or backends"},
	"internal/crosscheck":             {nil, "crosscheck is tests only"},
	"internal/crosscheck/datamodel":   {nil, "crosscheck is tests only"},
	"internal/crosscheck/tpurules":    {nil, "crosscheck is tests only"},
	"internal/crosscheck/workingdir":  {nil, "crosscheck is tests only"},
	"internal/testinfra/alloctest":    {nil, "test infrastructure is a leaf"},
	"internal/testinfra/apirecord":    {nil, "test infrastructure is a leaf"},
	"internal/testinfra/badfile":      {nil, "test infrastructure is a leaf"},
	"internal/testinfra/faultproxy":   {nil, "test infrastructure is a leaf"},
	"internal/testinfra/gobin":        {nil, "test infrastructure is a leaf"},
	"internal/testinfra/golden":       {nil, "test infrastructure is a leaf"},
	"internal/testinfra/gcsemu":       {nil, "test infrastructure is a leaf"},
	"internal/testinfra/silentserver": {nil, "test infrastructure is a leaf"},
	"internal/testinfra/owntest":      {nil, "test infrastructure is a leaf"},
	"internal/testinfra/syncbuf":      {nil, "test infrastructure is a leaf"},
	"internal/testinfra/testtree":     {nil, "test infrastructure is a leaf"},
	"internal/testinfra/traintest":    {nil, "test infrastructure is a leaf"},
	"internal/testinfra/raytest":      {[]string{"internal/raycluster", "ray", "sim"}, "raytest starts local clusters, and Serve on them, for tests"},
	"internal/testinfra/setupwait":    {nil, "test infrastructure is a leaf"},
	"internal/testinfra/venvtest":     {[]string{"internal/pyenv", "internal/testinfra/setupwait"}, "venvtest finds the venv for tests, waiting for the LLM one's install"},
	"internal/testinfra/kubetest":     {[]string{"internal/testinfra/gcsemu", "internal/testinfra/podrunner", "internal/testinfra/setupwait"}, "the kube test control plane imports nothing of raytpu's but its pod runner, its object storage and the wait for its build"},
	"internal/testinfra/podrunner":    {[]string{"internal/raycluster", "rayvocab", "tpu"}, "the pod runner (a kubelet, CNI and cluster DNS for the test control plane) reuses the local cluster's host posing, Ray's TPU host variables and the catalog's GKE accelerator names, and nothing else of raytpu's"},
	"examples/batchinfer":             {examplesMay, "examples use the public packages only"},
	"examples/custombackend":          {examplesMay, "examples use the public packages only"},
	"examples/jaxtrain":               {examplesMay, "examples use the public packages only"},
	"examples/llm":                    {examplesMay, "examples use the public packages only"},
	"examples/serve":                  {examplesMay, "examples use the public packages only"},
	"bench/cpubench":                  {nil, "the CPU timer of the benchmarks is a leaf"},
	"bench/compilebench":              {benchMay, "benchmarks use the public packages and the local cluster"},
	"bench/jobsbench":                 {benchMay, "benchmarks use the public packages and the local cluster"},
	"bench/servecompilebench":         {benchMay, "benchmarks use the public packages and the local cluster"},
	"bench/llmcompilebench":           {benchMay, "benchmarks use the public packages and the local cluster"},
	"bench/servegrpcbench":            {benchMay, "benchmarks use the public packages and the local cluster"},
	"bench/llmstreambench":            {benchMay, "benchmarks use the public packages and the local cluster"},
}

// docsExamples holds the sources of the documentation's Go snippets, one
// package of test files per topic (docs/examples/train, ...): a package
// under it needs no entry of its own in allowed; it has the examples'
// rule (TestDocSnippets checks the Markdown against them).
const docsExamples = "docs/examples"

var docsExamplesRule = struct {
	may []string
	why string
}{examplesMay, "the documentation's examples use the public packages only"}

// serveInternal are serve's internal packages, which serve and serve/llm share.
var serveInternal = []string{"serve/internal/freeform", "serve/internal/servecheck"}

// frontEnd is what a front end may import.
var frontEnd = []string{"backend", "field", "internal/batchmodel", "internal/nilness", "placement", "rayruntime", "rayvocab", "runtimeenv", "serveconfig", "tpu"}

// public are the module's public packages.
var public = []string{"backend", "backend/backendtest", "data", "field", "field/fieldfile", "kuberay", "kuberay/kubesim", "observe", "placement", "profiler",
	"ray", "raybackend", "rayruntime", "rayvocab", "runtimeenv", "runtimeenv/packaging", "serve", "serve/client", "serve/llm", "serve/servev1", "serveconfig", "sim", "tpu", "train"}

var (
	cliMay      = slices.Concat(public, []string{"cmd/raytpu/internal/progress", "internal/pyenv", "internal/raycluster", "internal/tpuplugin"})
	examplesMay = public
	benchMay    = slices.Concat(public, []string{"bench/cpubench", "internal/raycluster", "internal/testinfra/testtree"})
)

// testsMayNot are the module's packages no test imports: commands,
// examples and benchmarks are programs. A program's internal packages
// (cmd/raytpu/internal/cli, ...) are its libraries, not programs: its own
// tests import them, and Go keeps every other package out.
var testsMayNot = []string{"cmd/", "examples/", "bench/"}

// isProgram reports whether the module's package rel is one no test
// imports (testsMayNot).
func isProgram(rel string) bool {
	return !strings.Contains(rel, "/internal/") && slices.ContainsFunc(testsMayNot, func(p string) bool { return strings.HasPrefix(rel, p) })
}

// kubeOnly are import prefixes only the kuberay backend and the kube test
// control plane (kubeCode) may use, and the tests of kubeTests.
var kubeOnly = []string{"k8s.io/", "sigs.k8s.io/"}

// kubeCode are the packages (with the packages below them) whose code and
// tests may import kubeOnly packages: the kuberay backend, and the test
// control plane with its pod runner.
var kubeCode = []string{"kuberay", "internal/testinfra/kubetest", "internal/testinfra/podrunner"}

// kubeTests are the packages whose tests, not their code, may import
// kubeOnly packages too: the command's tests read back from the test
// control plane what `raytpu apply` wrote there, and this package's
// TestTotal names the client-go types of kuberay's parameters
// (total_walk_test.go) to call kuberay.New and friends with zero values.
var kubeTests = []string{"cmd/raytpu/internal/cli", ""}

// mayImportKube reports whether rel's code (or, with test, its tests) may
// import kubeOnly packages.
func mayImportKube(rel string, test bool) bool {
	return slices.ContainsFunc(kubeCode, func(p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }) ||
		test && slices.Contains(kubeTests, rel)
}

func TestImportDirections(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range bytes.Lines(out) {
		parts := strings.Split(strings.TrimSpace(string(line)), "|")
		if len(parts) != 3 {
			continue
		}
		seen++
		for _, v := range violations(parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])) {
			t.Error(v)
		}
	}
	if seen < len(allowed)/2 {
		t.Fatalf("go list saw only %d packages; the check would be vacuous", seen)
	}
}

// violations lists what pkg's code (imports) and tests (testImports)
// import against the rules.
func violations(pkg string, imports, testImports []string) []string {
	rel, inModule := relPath(pkg)
	if !inModule {
		return []string{pkg + ": not in module " + module}
	}
	rule, ok := allowed[rel]
	if !ok && strings.HasPrefix(rel, docsExamples+"/") {
		rule, ok = docsExamplesRule, true
	}
	if !ok {
		return []string{pkg + ": no import rule; add the package to imports_test.go's allowed"}
	}
	var out []string
	for i, imp := range slices.Concat(imports, testImports) {
		test := i >= len(imports)
		if !mayImportKube(rel, test) && slices.ContainsFunc(kubeOnly, func(p string) bool { return strings.HasPrefix(imp, p) }) {
			out = append(out, pkg+" imports "+imp+": only the kuberay backend and the kube test control plane may import k8s.io and sigs.k8s.io packages")
		}
		r, mine := relPath(imp)
		switch {
		case !mine || r == rel:
		case test:
			if isProgram(r) {
				out = append(out, pkg+"'s tests import "+imp+": commands, examples and benchmarks are programs, not libraries")
			}
		case !slices.Contains(rule.may, r):
			out = append(out, pkg+" imports "+imp+": "+rule.why)
		}
	}
	return out
}

// relPath is an import path relative to the module ("" for the module's
// root package) and whether it is in the module.
func relPath(imp string) (string, bool) {
	if imp == module {
		return "", true
	}
	r, ok := strings.CutPrefix(imp, module+"/")
	return r, ok
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
		{module + "/serve/llm", module + "/serve", false},
		{module + "/serve/llm", module + "/placement", false},
		{module + "/serve/llm", module + "/train", true},
		{module + "/serve/llm", module + "/raybackend", true},
		{module + "/serve/llm", module + "/serve/client", true},
		{module + "/serve", module + "/serve/llm", true},
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
		{module + "/internal/raycluster", module + "/cmd/raytpu/internal/cli", true},
		{module + "/internal/raycluster", module + "/raybackend", true},
		{module + "/internal/raycluster", module + "/sim", false},
		{module + "/cmd/raytpu/internal/cli", module + "/internal/testinfra/raytest", true},
		{module + "/cmd/raytpu/internal/cli", module + "/internal/testinfra/kubetest", true},
		{module + "/cmd/raytpu/internal/cli", module + "/internal/raycluster", false},
		{module + "/cmd/raytpu/internal/cli", module + "/cmd/raytpu/internal/progress", false},
		{module + "/cmd/raytpu/internal/cli", module + "/examples/jaxtrain", true},
		{module + "/cmd/raytpu/internal/progress", module + "/cmd/raytpu/internal/cli", true},
		{module + "/cmd/raytpu", module + "/internal/raycluster", true},
		{module + "/cmd/raytpu", module + "/cmd/raytpu/internal/cli", false},
		{module + "/cmd/raytpu", module + "/cmd/raytpu/internal/progress", true},
		{module + "/placement", module + "/internal/testinfra/golden", true},
		{module + "/internal/testinfra/golden", module + "/placement", true},
		{module + "/internal/testinfra/raytest", module + "/internal/raycluster", false},
		{module + "/examples/jaxtrain", module + "/internal/raycluster", true},
		{module + "/examples/jaxtrain", module + "/train", false},
		{module + "/bench/jobsbench", module + "/internal/raycluster", false},
		{module + "/bench/jobsbench", module + "/cmd/raytpu/internal/cli", true},
		{module + "/sim", "k8s.io/apimachinery/pkg/util/validation", true},
		{module + "/internal/testinfra/kubetest", "sigs.k8s.io/controller-runtime/pkg/envtest", false},
		{module + "/internal/testinfra/kubetest", module + "/internal/testinfra/podrunner", false},
		{module + "/internal/testinfra/kubetest", module + "/kuberay", true},
		{module + "/internal/testinfra/podrunner", "k8s.io/client-go/kubernetes", false},
		{module + "/internal/testinfra/podrunner", module + "/internal/raycluster", false},
		{module + "/internal/testinfra/podrunner", module + "/internal/testinfra/kubetest", true},
		{module + "/internal/testinfra/raytest", "k8s.io/client-go/kubernetes", true},
		{module + "/kuberay", module + "/internal/testinfra/kubetest", true},
		{module + "/cmd/raytpu/internal/cli", "sigs.k8s.io/controller-runtime/pkg/client", true},
	}
	for _, c := range cases {
		got := len(violations(c.pkg, []string{c.imp}, nil)) > 0
		if got != c.bad {
			t.Errorf("%s importing %s: violation = %v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}

// Tests may import any library of the module (test infrastructure, the
// simulator, other front ends), but no program; a package the rules do not
// name is a violation, as is k8s.io in a test outside kuberay.
func TestImportRulesForTestsAndNewPackages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pkg, testImp string
		bad          bool
	}{
		{module + "/placement", module + "/internal/testinfra/golden", false},
		{module + "/raybackend", module + "/internal/testinfra/raytest", false},
		{module + "/raybackend", module + "/serve", false},
		{module + "/kuberay", module + "/train", false},
		{module + "/cmd/raytpu/internal/cli", module + "/cmd/raytpu", true},
		{module + "/cmd/raytpu/internal/cli", module + "/cmd/raytpu/internal/progress", false},
		{module + "/raybackend", module + "/examples/serve", true},
		{module + "/serve", module + "/bench/servecompilebench", true},
		{module + "/raybackend", "k8s.io/client-go/kubernetes", true},
		{module + "/kuberay", "k8s.io/client-go/kubernetes", false},
		{module + "/kuberay", module + "/internal/testinfra/kubetest", false},
		{module + "/raybackend", module + "/internal/testinfra/kubetest", false},
		{module + "/internal/testinfra/podrunner", module + "/internal/testinfra/kubetest", false},
		{module + "/cmd/raytpu/internal/cli", module + "/internal/testinfra/kubetest", false},
		{module + "/cmd/raytpu/internal/cli", "k8s.io/apimachinery/pkg/api/errors", false},
		{module + "/cmd/raytpu/internal/cli", module + "/kuberay", false},
		{module + "/cmd/raytpu/internal/progress", "k8s.io/apimachinery/pkg/api/errors", true},
		{module + "/cmd/raytpu", "k8s.io/apimachinery/pkg/api/errors", true},
		{module + "/docs/examples/train", module + "/sim", false},
		{module + "/docs/examples/train", module + "/internal/testinfra/golden", false},
		{module + "/docs/examples/serve", module + "/examples/serve", true},
	}
	for _, c := range cases {
		got := len(violations(c.pkg, nil, []string{c.testImp})) > 0
		if got != c.bad {
			t.Errorf("%s's tests importing %s: violation = %v, want %v", c.pkg, c.testImp, got, c.bad)
		}
	}
	if v := violations(module+"/docs/examples/newtopic", []string{module + "/train"}, nil); len(v) != 0 {
		t.Errorf("a new topic under docs/examples: %v, want the examples' rule", v)
	}
	if v := violations(module+"/docs/examples/newtopic", []string{module + "/internal/raycluster"}, nil); len(v) != 1 {
		t.Errorf("docs/examples code importing an internal package: %v, want one violation", v)
	}
	if v := violations(module+"/docs/other", nil, nil); len(v) != 1 || !strings.Contains(v[0], "no import rule") {
		t.Errorf("a package under docs/ but not docs/examples: %v, want one violation saying so", v)
	}
	if v := violations(module+"/newpkg", nil, nil); len(v) != 1 || !strings.Contains(v[0], "no import rule") {
		t.Errorf("a package without a rule: %v, want one violation saying so", v)
	}
	if v := violations("example.com/other", nil, nil); len(v) != 1 {
		t.Errorf("a package outside the module: %v, want one violation", v)
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
		t.Error(`cmd/raytpu links package "testing"; move test helpers into a package only tests import (e.g. internal/testinfra/raytest)`)
	}
}
