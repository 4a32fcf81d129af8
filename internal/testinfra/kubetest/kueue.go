package kubetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KueueVersion is the Kueue release scripts/setup-kube.sh builds beside
// the control plane (Kueue's own cmd/kueue and go.mod, KubeRay v1.6.0
// types: it cannot build inside raytpu's module, see
// reference/gke-capacity-kueue.md §4).
const KueueVersion = "v0.17.0"

// KueueNamespace is the namespace Kueue runs for (its Configuration's
// namespace), created before it starts.
const KueueNamespace = "kueue-system"

// kueueMetricsCertEnv names the variable the binary setup-kube.sh builds
// reads its metrics serving certificate directory from: Kueue v0.17's
// cmd/kueue hard-codes /etc/kueue/metrics/certs (a Secret volume in its
// Deployment) and exits when no certificate is there, even with the
// metrics server off, so the build changes that one path into a call that
// reads this variable (internal/tools/kube/kueue).
const kueueMetricsCertEnv = "KUEUE_METRICS_CERT_DIR"

// kueueProcess is a running Kueue controller manager.
type kueueProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *os.File
	took time.Duration
}

var sharedKueue struct {
	once sync.Once
	err  error
}

// SharedKueue returns SharedPods' control plane with Kueue's controllers
// (the real cmd/kueue of KueueVersion, a separate process) running
// against it, started on first use and stopped by Main: the rayjob and
// raycluster integrations, no webhooks (raytpu renders spec.suspend
// itself), kube-controller-manager's garbage collector deleting a
// finished job's Workload with it. A missing binary fails tb with the
// command that builds it.
func SharedKueue(tb testing.TB) *Env {
	tb.Helper()
	env := SharedPods(tb)
	sharedKueue.once.Do(func() { sharedKueue.err = env.StartKueue(context.Background()) })
	if sharedKueue.err != nil {
		tb.Fatal(sharedKueue.err)
	}
	return env
}

// KueueStartDuration is how long SharedKueue's Kueue took to start, CRDs
// included (0 before it started).
func (e *Env) KueueStartDuration() time.Duration {
	if e.kueue == nil {
		return 0
	}
	return e.kueue.took
}

// StartKueue installs Kueue's CRDs and starts its controller manager
// against e; Stop stops it.
func (e *Env) StartKueue(ctx context.Context) error {
	if e.kueue != nil {
		return errors.New("kubetest: Kueue already runs")
	}
	start := time.Now()
	if os.Getenv(envAssets) == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		if err := waitForKueueBuild(filepath.Join(root, ".cache", "kube")); err != nil {
			return err
		}
	}
	if err := checkKueue(e.Assets); err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{
		Paths: []string{e.Assets.KueueCRDs}, ErrorIfPathMissing: true, MaxTime: StartTimeout,
	}); err != nil {
		return fmt.Errorf("kubetest: installing Kueue's CRDs from %s: %w", e.Assets.KueueCRDs, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubetest: creating namespace %s: %w", KueueNamespace, err)
	}
	dir := filepath.Join(e.certDir, "kueue")
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	if err := writeServingCert(certs); err != nil {
		return err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(e.Config, "", kc); err != nil {
		return fmt.Errorf("kubetest: writing Kueue's kubeconfig: %w", err)
	}
	webhookPort, err := freePort()
	if err != nil {
		return err
	}
	healthPort, err := freePort()
	if err != nil {
		return err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(kueueConfig(webhookPort, healthPort, certs)), 0o600); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	p, err := startKueue(ctx, e.Assets.Kueue, cfg, kc, certs, dir, healthPort)
	if err != nil {
		return err
	}
	p.took = time.Since(start)
	e.kueue = p
	return nil
}

// kueueConfig is Kueue's Configuration: no leader election, no internal
// certificate management (it would wait for a Secret volume), the webhook
// server and health probes on loopback, no metrics server, no visibility
// API server (VisibilityOnDemand: it needs certificates of its own), and
// the RayJob and RayCluster integrations, which Kueue does not enable by
// default. RayService is left out (it needs KubeRay v1.6's types).
func kueueConfig(webhookPort, healthPort int, certDir string) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks:
  - ray.io/rayjob
  - ray.io/raycluster
`, KueueNamespace, webhookPort, certDir, healthPort)
}

// startKueue starts bin and waits until its readiness endpoint answers ok.
// Its output goes to dir/kueue.log (and to stderr with RAYTPU_KUBE_LOG=1).
func startKueue(ctx context.Context, bin, cfg, kubeconfig, certs, dir string, healthPort int) (*kueueProcess, error) {
	log, err := os.Create(filepath.Join(dir, "kueue.log"))
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	cmd := exec.Command(bin, "--config="+cfg, "--kubeconfig="+kubeconfig, "--zap-log-level=info")
	cmd.Env = append(os.Environ(), kueueMetricsCertEnv+"="+certs)
	var out io.Writer = log
	if os.Getenv(EnvLog) == "1" {
		out = io.MultiWriter(log, os.Stderr)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// The test binary's death takes Kueue with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("kubetest: starting %s: %w", bin, err)
	}
	p := &kueueProcess{cmd: cmd, done: make(chan struct{}), log: log}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx, healthPort); err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// waitReady polls Kueue's /readyz (plain HTTP) until it answers ok, the
// process exits, or StartTimeout passes.
func (p *kueueProcess) waitReady(ctx context.Context, port int) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
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
		case <-p.done:
			return fmt.Errorf("kubetest: Kueue exited at start (%v); its log: %s", p.err, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kubetest: Kueue not ready within %v: %v; its log: %s", StartTimeout, err, p.log.Name())
		}
	}
}

// stop sends SIGTERM, then SIGKILL after APIServerStopGrace, and waits.
func (p *kueueProcess) stop() error {
	defer p.log.Close()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(APIServerStopGrace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("kubetest: Kueue did not exit 30s after SIGKILL")
	}
}

// checkKueue fails, saying how to build them, when Kueue's binary or CRDs
// are missing.
func checkKueue(a Assets) error {
	how := "run scripts/setup-kube.sh (or make test), which builds Kueue " + KueueVersion + " beside etcd and kube-apiserver (about 6 minutes on 2 cores)"
	if fi, err := os.Stat(a.Kueue); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("kubetest: Kueue's controller binary %s is missing (from %s): %s", a.Kueue, source(filepath.Dir(a.Kueue)), how)
	}
	if _, err := os.Stat(filepath.Join(a.KueueCRDs, "kueue.x-k8s.io_workloads.yaml")); err != nil {
		return fmt.Errorf("kubetest: Kueue's CRDs are missing from %s: %s", a.KueueCRDs, how)
	}
	return nil
}

// writeServingCert writes a self-signed tls.crt and tls.key for 127.0.0.1
// into dir: Kueue's webhook server and its metrics certificate watcher
// read them at start.
func writeServingCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kueue"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fmt.Errorf("kubetest: Kueue's certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("kubetest: Kueue's key: %w", err)
	}
	for name, b := range map[string][]byte{"tls.crt": pemBlock("CERTIFICATE", der), "tls.key": pemBlock("PRIVATE KEY", pkcs8)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
	}
	return nil
}
