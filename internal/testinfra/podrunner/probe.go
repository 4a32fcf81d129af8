package podrunner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probe runs one check of pr against container c run p: exec in the
// container, httpGet and tcpSocket from the node to the pod's IP, as the
// kubelet does. It returns nil on success.
func (w *worker) probe(ctx context.Context, c *corev1.Container, p *proc, pr *corev1.Probe) error {
	timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case pr.Exec != nil:
		out, err := p.exec(ctx, w.r.tools.nsenter, pr.Exec.Command)
		if err != nil {
			return fmt.Errorf("exec probe %q: %w: %s", strings.Join(pr.Exec.Command, " "), err, strings.TrimSpace(string(out[:min(len(out), 512)])))
		}
		return nil
	case pr.HTTPGet != nil:
		g := pr.HTTPGet
		port, err := portOf(c, g.Port)
		if err != nil {
			return err
		}
		host := g.Host
		if host == "" {
			host = w.ns.Load().ip
		}
		scheme := strings.ToLower(string(g.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		path := g.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+path, nil)
		if err != nil {
			return err
		}
		for _, h := range g.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		req.Header.Set("User-Agent", "kube-probe/1.37")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("httpGet probe: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("httpGet probe %s: HTTP %d", req.URL, resp.StatusCode)
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := portOf(c, pr.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := pr.TCPSocket.Host
		if host == "" {
			host = w.ns.Load().ip
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("tcpSocket probe: %w", err)
		}
		return conn.Close()
	}
	return fmt.Errorf("unsupported probe handler (podrunner runs exec, httpGet and tcpSocket probes)")
}

// portOf resolves a probe's port, by number or by the container's port
// name.
func portOf(c *corev1.Container, p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}

// prober runs pr every period after its initial delay while p runs and
// calls result with the probe's verdict whenever successThreshold
// successes or failureThreshold failures in a row change it.
func (w *worker) prober(ctx context.Context, c *corev1.Container, p *proc, pr *corev1.Probe, kind string, result func(ok bool, msg string)) {
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	succ, fail := int(max(pr.SuccessThreshold, 1)), int(max(pr.FailureThreshold, 1))
	select {
	case <-time.After(time.Duration(pr.InitialDelaySeconds) * time.Second):
	case <-ctx.Done():
		return
	case <-p.done:
		return
	}
	var okRun, failRun int
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		err := w.probe(ctx, c, p, pr)
		if ctx.Err() != nil || !p.running() {
			return
		}
		if err == nil {
			okRun, failRun = okRun+1, 0
			if okRun == succ {
				result(true, "")
			}
		} else {
			okRun, failRun = 0, failRun+1
			if failRun == fail {
				result(false, fmt.Sprintf("%s probe failed: %v", kind, err))
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		case <-p.done:
			return
		}
	}
}
