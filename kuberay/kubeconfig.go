package kuberay

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadConfig reads a kubeconfig by kubectl's loading rules: the file at
// path if set, else $KUBECONFIG (a list of files, merged), else
// ~/.kube/config; contextName picks a context other than the current one.
// It returns the client configuration and the context's namespace
// ("default" when the context names none).
func LoadConfig(path, contextName string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: contextName})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kuberay: loading the kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kuberay: reading the kubeconfig's namespace: %w", err)
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	return cfg, ns, nil
}
