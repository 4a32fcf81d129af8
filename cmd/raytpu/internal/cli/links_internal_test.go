package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/raycluster"
)

// TestLinks pins every dashboard URL the command prints to the routes the
// installed Ray dashboard serves (its build's HashRouter routes jobs/:id,
// serve/applications/:applicationName, metrics and cluster).
func TestLinks(t *testing.T) {
	t.Parallel()
	l := newLinks("http://127.0.0.1:8265/")
	pre := newLinks("https://ray.example.com/dash")
	cases := []struct{ name, got, want string }{
		{"job", l.Job("raytpu_abc123"), "http://127.0.0.1:8265/#/jobs/raytpu_abc123"},
		{"job id escaped", l.Job("a b/c"), "http://127.0.0.1:8265/#/jobs/a%20b%2Fc"},
		{"serve app", l.ServeApp("chat"), "http://127.0.0.1:8265/#/serve/applications/chat"},
		{"serve app escaped", l.ServeApp("my app/1"), "http://127.0.0.1:8265/#/serve/applications/my%20app%2F1"},
		{"metrics", l.Metrics(), "http://127.0.0.1:8265/#/metrics"},
		{"cluster", l.Cluster(), "http://127.0.0.1:8265/#/cluster"},
		{"path prefix", pre.Job("j"), "https://ray.example.com/dash/#/jobs/j"},
		{"kube ref", kubeRef("RayJob", "ml", "train"), "rayjob/train in namespace ml"},
		{"kube dashboard", kubeDashboard("ml", "train-raycluster-x-head-svc"),
			"http://train-raycluster-x-head-svc.ml.svc:8265 (from outside: kubectl -n ml port-forward svc/train-raycluster-x-head-svc 8265, then http://127.0.0.1:8265)"},
		{"kube dashboard unknown", kubeDashboard("ml", ""), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.got != c.want {
				t.Errorf("got  %s\nwant %s", c.got, c.want)
			}
		})
	}
}

// TestLinkRoutesInInstalledDashboard reads the installed Ray dashboard's
// build and checks that it still routes by hash and serves the routes
// links builds.
func TestLinkRoutesInInstalledDashboard(t *testing.T) {
	t.Parallel()
	root, err := raycluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	js, err := filepath.Glob(filepath.Join(root, ".venv", "lib", "python3*", "site-packages", "ray", "dashboard", "client", "build", "static", "js", "main.*.js"))
	if err != nil || len(js) != 1 {
		t.Fatalf("want the installed Ray dashboard's main.*.js (run scripts/setup-venv.sh), found %v (%v)", js, err)
	}
	b, err := os.ReadFile(js[0])
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{
		"location.hash.substr(1)", // react-router's hash history
		`path:"jobs",children:`, `path:":id",children:`,
		`path:"serve",children:`, `path:"applications/:applicationName"`,
		`path:"metrics"`, `path:"cluster"`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("%s lacks %q: the dashboard's routes changed, update links", js[0], want)
		}
	}
}
