package kuberay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

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

// answerTimeout is how long New's clients wait for the apiserver to start
// answering a request (its response headers); a watch that answered then
// streams for as long as its context lets it.
const answerTimeout = 30 * time.Second

// withAnswerTimeout is a copy of cfg whose requests fail when the server
// has not started answering within d: a server that accepts connections
// and never answers costs a call at most d, whatever its context. A
// cfg.Timeout the caller set (a whole-request limit) is kept.
func withAnswerTimeout(cfg *rest.Config, d time.Duration) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &answerDeadline{rt: rt, d: d} })
	return cfg
}

// answerDeadline cancels a request whose response has not begun within d.
type answerDeadline struct {
	rt http.RoundTripper
	d  time.Duration
}

func (a *answerDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(a.d, func() {
		cancel(fmt.Errorf("kuberay: the apiserver did not answer %s %s within %s", req.Method, req.URL.Path, a.d))
	})
	resp, err := a.rt.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && req.Context().Err() == nil {
			err = cause
		}
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
	return resp, nil
}

// cancelOnClose releases a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
