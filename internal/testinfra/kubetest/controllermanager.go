package kubetest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Controllers are the kube-controller-manager controllers WithControllerManager
// runs: the Job controller gives a Job (a RayJob's K8sJobMode submitter) its
// pods and status, and the garbage collector deletes the objects whose
// owners are gone (a RayJob's RayCluster and submitter Job, their pods and
// Services), and the endpoints controller keeps each Service's Endpoints
// (the ready pods behind it), which KubeRay's RayService controller counts
// for the serve Service before it sets Ready. The service account
// controller makes each namespace's default ServiceAccount and the root CA
// publisher its kube-root-ca.crt ConfigMap (the CA of the API server's
// serving certificate): with them the ServiceAccount admission plugin,
// which WithControllerManager turns on, gives every pod a token and a CA
// to reach the API server with (Ray's autoscaler in a head pod does). The
// rest (namespaces, legacy service account token secrets, endpoint
// slices, nodes' lifecycle, ReplicaSets, ...) stay off: nothing here needs
// them, and each one costs the loaded machine informers and CPU.
var Controllers = []string{"job-controller", "garbage-collector-controller", "endpoints-controller",
	"serviceaccount-controller", "root-ca-certificate-publisher-controller"}

// controllerManager is a running kube-controller-manager process.
type controllerManager struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *os.File
}

// startControllerManager starts bin against the apiserver kubeconfig
// reaches, with Controllers only, no leader election, and its health
// endpoint on a free loopback port, and waits until that endpoint answers
// ok. Its output goes to dir/kube-controller-manager.log (and to stderr
// with RAYTPU_KUBE_LOG=1).
func startControllerManager(ctx context.Context, bin, kubeconfig, dir, rootCA string) (*controllerManager, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "kube-controller-manager.log"))
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--controllers="+strings.Join(Controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "kube-controller-manager-certs"),
		"--root-ca-file="+rootCA,
	)
	var out io.Writer = log
	if os.Getenv(EnvLog) == "1" {
		out = io.MultiWriter(log, os.Stderr)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// The test binary's death takes the controller manager with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("kubetest: starting %s: %w", bin, err)
	}
	cm := &controllerManager{cmd: cmd, done: make(chan struct{}), log: log}
	go func() {
		cm.err = cmd.Wait()
		close(cm.done)
	}()
	if err := cm.waitHealthy(ctx, port); err != nil {
		return nil, errors.Join(err, cm.stop())
	}
	return cm, nil
}

// waitHealthy polls the controller manager's /healthz until it answers ok,
// the process exits, or StartTimeout passes.
func (cm *controllerManager) waitHealthy(ctx context.Context, port int) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// Its serving certificate is self-signed, made at start.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health check of a test process
	}}
	defer hc.CloseIdleConnections()
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	deadline := time.Now().Add(StartTimeout)
	for {
		resp, err := hc.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		select {
		case <-cm.done:
			return fmt.Errorf("kubetest: kube-controller-manager exited at start (%v); its log: %s", cm.err, cm.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kubetest: kube-controller-manager not healthy within %v: %v", StartTimeout, err)
		}
	}
}

// stop sends SIGTERM, then SIGKILL after APIServerStopGrace, and waits.
func (cm *controllerManager) stop() error {
	defer cm.log.Close()
	_ = cm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-cm.done:
		return nil
	case <-time.After(APIServerStopGrace):
	}
	_ = syscall.Kill(-cm.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-cm.done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("kubetest: kube-controller-manager did not exit 30s after SIGKILL")
	}
}

// freePort is a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("kubetest: picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WithControllerManager also runs the real kube-controller-manager (built
// by scripts/setup-kube.sh beside kube-apiserver) with Controllers: a
// Job gets its pods (which a pod runner then runs) and owned objects are
// garbage-collected when their owner goes. It also turns on the
// ServiceAccount admission plugin (envtest turns it off): each pod gets its
// service account's token and the cluster's CA in a projected volume at
// /var/run/secrets/kubernetes.io/serviceaccount, and a pod whose account
// does not exist is refused (Namespace waits for a new namespace's default
// account).
func WithControllerManager() Option {
	return func(s *settings) { s.controllerManager = true }
}

// startControllerManager starts kube-controller-manager for e, with a
// kubeconfig and log in e's own directory.
func (e *Env) startControllerManager(ctx context.Context) (*controllerManager, error) {
	if err := checkBinary(e.Assets.ControllerManager); err != nil {
		return nil, err
	}
	kc := filepath.Join(e.certDir, "controller-manager.kubeconfig")
	if err := writeKubeconfig(e.Config, "", kc); err != nil {
		return nil, fmt.Errorf("kubetest: writing the controller manager's kubeconfig: %w", err)
	}
	return startControllerManager(ctx, e.Assets.ControllerManager, kc, e.certDir, filepath.Join(e.certDir, CAFile))
}
