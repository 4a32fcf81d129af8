package raytest

import (
	"encoding/json"
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/raytpu/raytpu/ray"
)

// StartServe starts Ray Serve through client, the dashboard at URL
// dashboard, with no application and its HTTP proxy on the head only,
// listening on a free port of the dashboard's address, and returns the
// proxy's base URL. Deleting
// a cluster's last application shuts Serve down: a test that deploys
// after one was deleted starts it again. When Serve is already running
// (an earlier test left an application behind) its HTTP options cannot
// change: StartServe returns the running proxy's URL instead.
func StartServe(tb testing.TB, client *ray.Client, dashboard string) string {
	tb.Helper()
	u, err := url.Parse(dashboard)
	if err != nil {
		tb.Fatal(err)
	}
	ip := u.Hostname()
	if d, err := client.ServeApplications(tb.Context()); err == nil && d.Running() && d.HTTPOptions != nil && d.HTTPOptions.Port != 0 {
		host := d.HTTPOptions.Host
		if host == "" || host == "0.0.0.0" {
			host = ip
		}
		return "http://" + net.JoinHostPort(host, strconv.Itoa(d.HTTPOptions.Port))
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	err = client.DeployServeApplications(tb.Context(), ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: ip, Port: port},
		Applications:  []json.RawMessage{},
	})
	if err != nil {
		tb.Fatalf("starting Serve: %v", err)
	}
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
}
