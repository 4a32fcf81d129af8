package kubetest

import (
	"context"
	"net"
	"net/http"
	"time"

	configapi "github.com/ray-project/kuberay/ray-operator/apis/config/v1alpha1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// dialingProvider is the operator's own client provider, except that its
// dashboard client dials through dial, which resolves the cluster DNS
// names a pod runner serves (<head-svc>.<ns>.svc.cluster.local): the real
// RayDashboardClient with the 2s timeout KubeRay gives it. The HTTP proxy
// client dials pod IPs, which the root namespace reaches as is.
type dialingProvider struct {
	configapi.Configuration
	client *http.Client
}

func newDialingProvider(dial func(ctx context.Context, network, addr string) (net.Conn, error)) dialingProvider {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = dial
	return dialingProvider{client: &http.Client{Timeout: 2 * time.Second, Transport: t}}
}

func (p dialingProvider) GetDashboardClient(manager.Manager) func(*rayv1.RayCluster, string) (dashboardclient.RayDashboardClientInterface, error) {
	return func(_ *rayv1.RayCluster, url string) (dashboardclient.RayDashboardClientInterface, error) {
		c := &dashboardclient.RayDashboardClient{}
		c.InitClient(p.client, "http://"+url)
		return c, nil
	}
}
