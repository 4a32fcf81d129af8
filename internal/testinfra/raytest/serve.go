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
// after one was deleted starts it again.
func StartServe(tb testing.TB, client *ray.Client, dashboard string) string {
	tb.Helper()
	u, err := url.Parse(dashboard)
	if err != nil {
		tb.Fatal(err)
	}
	ip := u.Hostname()
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
