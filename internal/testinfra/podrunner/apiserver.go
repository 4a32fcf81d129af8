package podrunner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// APIServerPort is the port on which pods reach the API server at the
// bridge's address: the kubernetes Service's port, 443.
const APIServerPort = 443

// apiProxy is the route from the pods to the API server, which listens on
// the root namespace's loopback: a TCP forwarder on the bridge's address,
// as kube-proxy forwards the kubernetes Service's ClusterIP to the API
// server's endpoints. TLS passes through untouched, so a pod verifies the
// API server's own serving certificate (whose SANs must name the bridge's
// address: see Network) and authenticates with its own token.
type apiProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// apiTarget is host:port of the API server a rest.Config's Host names.
func apiTarget(host string) (string, error) {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("podrunner: the API server's address %q is not a URL", host)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "443"), nil
	}
	return u.Host, nil
}

// startAPIProxy forwards addr:APIServerPort to target.
func startAPIProxy(addr, target string) (*apiProxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(APIServerPort)))
	if err != nil {
		return nil, fmt.Errorf("podrunner: the pods' route to the API server: %w", err)
	}
	p := &apiProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(p.serve)
	return p, nil
}

func (p *apiProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// track adds or removes c from the open connections; it refuses a new one
// once the proxy is closing.
func (p *apiProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.closed {
			return false
		}
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *apiProxy) forward(c net.Conn) {
	defer func() {
		p.track(c, false)
		c.Close()
	}()
	var d net.Dialer
	up, err := d.DialContext(context.Background(), "tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	defer func() {
		p.track(up, false)
		up.Close()
	}()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

// close stops listening, cuts every open connection and waits.
func (p *apiProxy) close() error {
	p.mu.Lock()
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// serviceEnv is what a kubelet sets in every container for the API
// server's Service, kubernetes in namespace default, whatever the pod's
// enableServiceLinks: here its address is the bridge's, where apiProxy
// listens (a ClusterIP would need a kube-proxy).
func (r *Runner) serviceEnv() []corev1.EnvVar {
	host, port := r.net.gw, strconv.Itoa(APIServerPort)
	addr := "tcp://" + net.JoinHostPort(host, port)
	return []corev1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: host},
		{Name: "KUBERNETES_SERVICE_PORT", Value: port},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: port},
		{Name: "KUBERNETES_PORT", Value: addr},
		{Name: "KUBERNETES_PORT_" + port + "_TCP", Value: addr},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_PROTO", Value: "tcp"},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_PORT", Value: port},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_ADDR", Value: host},
	}
}
