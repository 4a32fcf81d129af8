package cli

import (
	"fmt"
	"net/url"
	"strings"
)

// links builds every Ray dashboard URL the command prints, in one place.
//
// The Ray 2.60 dashboard is a single page app under a hash router (its
// build mounts its routes in react-router's HashRouter): the job page is
// <dashboard>/#/jobs/<id> (the page reads GET /api/jobs/<id>, which takes
// a submission id or a job id), a Serve application
// <dashboard>/#/serve/applications/<name> (the name URI-encoded, as the
// dashboard's own links do), the metrics page <dashboard>/#/metrics and
// the cluster page <dashboard>/#/cluster.
type links struct {
	// base is the dashboard URL without credentials nor trailing slash,
	// as ray.Client.BaseURL gives it.
	base string
}

func newLinks(base string) links { return links{base: strings.TrimRight(base, "/")} }

func (l links) route(parts ...string) string {
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return l.base + "/#/" + strings.Join(parts, "/")
}

// Job is the job page of a job, by submission id (or job id).
func (l links) Job(id string) string { return l.route("jobs", id) }

// ServeApp is the page of a Serve application.
func (l links) ServeApp(name string) string { return l.route("serve", "applications", name) }

// Metrics is the metrics page (Grafana panels when Grafana is set up).
func (l links) Metrics() string { return l.route("metrics") }

// Cluster is the cluster page: nodes and their resources.
func (l links) Cluster() string { return l.route("cluster") }

// kubeRef names a KubeRay object as kubectl does: "rayjob/train in
// namespace ml".
func kubeRef(kind, namespace, name string) string {
	return fmt.Sprintf("%s/%s in namespace %s", strings.ToLower(kind), name, namespace)
}

// kubeDashboard says where a KubeRay cluster's dashboard is: its head
// service's port 8265 inside the cluster, and how to reach it from here.
// "" when the service is not known yet.
func kubeDashboard(namespace, service string) string {
	if service == "" {
		return ""
	}
	return fmt.Sprintf("http://%s.%s.svc:8265 (from outside: kubectl -n %s port-forward svc/%s 8265, then http://127.0.0.1:8265)",
		service, namespace, namespace, service)
}
