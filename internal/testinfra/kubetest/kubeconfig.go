package kubetest

import (
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig file for the control plane (admin
// credentials, namespace ns in its one context) into a temporary directory
// of tb and returns its path.
func (e *Env) WriteKubeconfig(tb testing.TB, ns string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := writeKubeconfig(e.Config, ns, path); err != nil {
		tb.Fatalf("kubetest: writing a kubeconfig: %v", err)
	}
	return path
}

// writeKubeconfig writes a kubeconfig for c (namespace ns) to path.
func writeKubeconfig(c *rest.Config, ns, path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	cfg.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*cfg, path)
}
