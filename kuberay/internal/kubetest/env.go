package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// EnvLog names the variable that, set to 1, sends the operator's and the
// control plane's logs to stderr (they are discarded otherwise).
const EnvLog = "RAYTPU_KUBE_LOG"

// StartTimeout bounds the start of etcd and kube-apiserver each; a loaded
// 2-core machine needs far more than envtest's 20s default.
const StartTimeout = 2 * time.Minute

// Env is a running control plane with the KubeRay operator.
type Env struct {
	// Config reaches the apiserver as an administrator.
	Config *rest.Config
	// Client reads and writes directly (no cache), with KubeRay's types in
	// its scheme.
	Client client.Client
	// Scheme holds the built-in types and KubeRay's.
	Scheme *runtime.Scheme
	// Assets are the binaries and CRDs in use.
	Assets Assets

	env      *envtest.Environment
	operator *operator
}

// NewScheme returns a scheme with the built-in Kubernetes types and
// KubeRay's ray.io/v1 types.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := rayv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

var setLogger sync.Once

func logOutput() io.Writer {
	if os.Getenv(EnvLog) == "1" {
		return os.Stderr
	}
	return io.Discard
}

// Start starts etcd, kube-apiserver, KubeRay's CRDs and operator, and the
// pod-status driver. Stop releases them.
func Start(ctx context.Context) (*Env, error) {
	setLogger.Do(func() { logf.SetLogger(zap.New(zap.WriteTo(logOutput()), zap.UseDevMode(true))) })
	assets, err := FindAssets()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory:    assets.Dir,
		CRDDirectoryPaths:        []string{assets.CRDs},
		ErrorIfCRDPathMissing:    true,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: StartTimeout},
		Scheme:                   scheme,
		ControlPlaneStartTimeout: StartTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if os.Getenv(EnvLog) == "1" {
		te.AttachControlPlaneOutput = true
	}
	api := te.ControlPlane.GetAPIServer()
	api.Path = assets.APIServer
	// No controller manages the kubernetes Service's endpoints here.
	api.Configure().Set("endpoint-reconciler-type", "none")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: assets.Etcd}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("kubetest: starting etcd and kube-apiserver from %s: %w", assets.Dir, err)
	}
	e := &Env{Config: cfg, Scheme: scheme, Assets: assets, env: te}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(err, te.Stop())
	}
	if e.operator, err = startOperator(ctx, cfg, scheme); err != nil {
		return nil, errors.Join(err, te.Stop())
	}
	return e, nil
}

// Stop stops the operator, then the control plane.
func (e *Env) Stop() error {
	var errs []error
	if e.operator != nil {
		errs = append(errs, e.operator.stop())
	}
	errs = append(errs, e.env.Stop())
	return errors.Join(errs...)
}
