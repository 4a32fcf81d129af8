package podrunner

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ClusterDomain is the cluster's DNS domain.
const ClusterDomain = "cluster.local"

// A Service's record as cluster DNS serves it: the name maps to the IPs
// of the pods behind it (its selector's pods that have an IP and are
// Ready, or every one of them when it publishes not-ready addresses).
// There is no kube-proxy: a ClusterIP Service resolves to its pods' IPs
// too, so a client reaches targetPort through the Service's port only
// when the two are equal (as in every Service KubeRay makes).
type record struct {
	namespace, name string
	ips             []string
}

// names are the record's names, searched from namespace from: the short
// forms only from the Service's own namespace.
func (r record) names(from string) []string {
	fq := r.name + "." + r.namespace + ".svc"
	n := []string{fq + "." + ClusterDomain, fq, r.name + "." + r.namespace}
	if from == r.namespace {
		n = append(n, r.name)
	}
	return n
}

// records computes every Service's record from the cache. The API
// server's Service, kubernetes in namespace default, has no selector: its
// record is apiAddr, where the runner forwards to the API server.
func records(ctx context.Context, c client.Reader, apiAddr string) ([]record, error) {
	var svcs corev1.ServiceList
	if err := c.List(ctx, &svcs); err != nil {
		return nil, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return nil, err
	}
	var out []record
	for _, s := range svcs.Items {
		if s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes" {
			out = append(out, record{namespace: s.Namespace, name: s.Name, ips: []string{apiAddr}})
			continue
		}
		if len(s.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(s.Spec.Selector)
		r := record{namespace: s.Namespace, name: s.Name}
		for _, p := range pods.Items {
			if p.Namespace != s.Namespace || p.Status.PodIP == "" || p.DeletionTimestamp != nil || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if s.Spec.PublishNotReadyAddresses || podReady(&p) {
				r.ips = append(r.ips, p.Status.PodIP)
			}
		}
		slices.Sort(r.ips)
		out = append(out, r)
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hostsFile is the /etc/hosts of a pod, as the kubelet writes it (its own
// name on its IP) plus every Service record, as cluster DNS would answer.
func hostsFile(podName, podNamespace, podIP string, recs []record) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (podrunner): the pod's own name and the cluster's Services.\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "%s\t%s\n", podIP, podName)
	for _, r := range recs {
		for _, ip := range r.ips {
			fmt.Fprintf(&b, "%s\t%s\n", ip, strings.Join(r.names(podNamespace), " "))
		}
	}
	return []byte(b.String())
}

// resolvConf sends every name the hosts file lacks to a closed port on
// loopback, so that a lookup fails at once instead of timing out.
func resolvConf(namespace string) []byte {
	return fmt.Appendf(nil, "search %s.svc.%s svc.%s %s\nnameserver 127.0.0.1\noptions ndots:5 attempts:1 timeout:1\n",
		namespace, ClusterDomain, ClusterDomain, ClusterDomain)
}

// writeEtc writes a pod's hosts and resolv.conf in place: `ip netns exec`
// bind-mounts them over /etc in each container, so the file must keep its
// inode for an update to reach running containers.
func writeEtc(dir string, hosts, resolv []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"hosts": hosts, "resolv.conf": resolv} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// dnsReconciler recomputes the records on every Service or Pod change and
// rewrites each running pod's hosts file.
type dnsReconciler struct{ r *Runner }

func setupDNS(mgr ctrl.Manager, r *Runner) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{}}
	})
	return ctrl.NewControllerManagedBy(mgr).Named("podrunner-dns").
		For(&corev1.Service{}).
		Watches(&corev1.Pod{}, all).
		Complete(&dnsReconciler{r: r})
}

func (d *dnsReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	recs, err := records(ctx, d.r.cache, d.r.net.gw)
	if err != nil {
		return ctrl.Result{}, err
	}
	d.r.mu.Lock()
	d.r.records = recs
	workers := slices.Collect(maps.Values(d.r.workers))
	d.r.mu.Unlock()
	for _, w := range workers {
		if err := w.writeEtc(); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// Lookup returns the IPs behind a Service's cluster DNS name as the
// root namespace sees it (<svc>.<ns>.svc.cluster.local, <svc>.<ns>.svc or
// <svc>.<ns>), or nil.
func (r *Runner) Lookup(host string) []string {
	host = strings.TrimSuffix(host, ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if slices.Contains(rec.names(""), host) {
			return slices.Clone(rec.ips)
		}
	}
	return nil
}

// DialContext dials addr as a process of the node's root namespace would
// with cluster DNS: a Service name resolves through Lookup, any other
// address as usual. The KubeRay operator's dashboard client dials through
// it to reach <head-svc>.<ns>.svc.cluster.local:8265.
func (r *Runner) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host) != nil {
		return d.DialContext(ctx, network, addr)
	}
	ips := r.Lookup(host)
	if len(ips) == 0 {
		if strings.HasSuffix(strings.TrimSuffix(host, "."), ".svc."+ClusterDomain) {
			return nil, &net.DNSError{Err: "no such Service or no ready pod behind it", Name: host, IsNotFound: true}
		}
		return d.DialContext(ctx, network, addr)
	}
	var errs []error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip, port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("podrunner: dial %s: %w", addr, errs[0])
}
