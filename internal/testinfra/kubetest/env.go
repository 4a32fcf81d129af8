package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/raytpu/raytpu/internal/testinfra/gcsemu"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// EnvLog names the variable that, set to 1, sends the operator's and the
// control plane's logs to stderr (they are discarded otherwise).
const EnvLog = "RAYTPU_KUBE_LOG"

// StartTimeout bounds the start of etcd and kube-apiserver each: envtest
// waits on their health endpoints (a readiness signal, not a fixed delay),
// and a loaded 2-core machine can need far more than its 20s default.
const StartTimeout = 5 * time.Minute

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

	// Pods runs the pods when the control plane started WithPodRunner,
	// else nil.
	Pods *podrunner.Runner
	// Storage is the cluster's object storage when the control plane
	// started WithObjectStorage, else nil.
	Storage *gcsemu.Server

	env         *envtest.Environment
	operator    *operator
	controllers *controllerManager
	kueue       *kueueProcess
	certDir     string
}

// An Option changes what Start starts.
type Option func(*settings)

type settings struct {
	podRunner         *podrunner.Options
	controllerManager bool
	objectStorage     bool
}

// WithObjectStorage gives a control plane WithPodRunner object storage,
// as GKE's pods have Cloud Storage: a GCS emulator (package gcsemu) on the
// pod network's gateway, which every container reaches through the
// emulator variables in its image environment (podrunner's ImageEnv;
// gcsemu.Server.Env) and the test process through the same variables,
// set in its own environment unless set already, so that Google's
// clients in raytpu (an upload to a bucket) reach it too. Env.Storage is
// the emulator, for the test to make buckets and read what the pods
// wrote.
func WithObjectStorage() Option {
	return func(s *settings) { s.objectStorage = true }
}

// WithPodRunner runs the pods for real with a podrunner.Runner (see
// package podrunner) instead of the pod-status driver: KubeRay's
// containers run their own `ray start` commands in per-pod network
// namespaces, readiness comes from their probes, and the operator's
// dashboard client resolves <svc>.<ns>.svc.cluster.local through the
// runner. It needs root. A test that wants it starts a control plane of
// its own:
//
//	env, err := kubetest.Start(ctx, kubetest.WithPodRunner(podrunner.Options{}))
//	...
//	defer env.Stop()
func WithPodRunner(opts podrunner.Options) Option {
	return func(s *settings) { s.podRunner = &opts }
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

// The loggers of controller-runtime and klog are set when the package is
// initialized, before any test runs: klog.SetLogger must not run while
// another goroutine logs through klog (client-go's clientcmd does, when a
// parallel test loads a kubeconfig while the first test starts the
// shared control plane; the race detector reports it).
func init() {
	// Not zap's development mode, whose DPanic panics: KubeRay v1.5.0
	// logs with an odd number of key-value arguments
	// (raycluster_controller.go:762, every single-host worker group with
	// RayMultiHostIndexing on), which the deployed operator only reports.
	l := zap.New(zap.WriteTo(logOutput()), zap.UseDevMode(false), zap.ConsoleEncoder())
	logf.SetLogger(l)
	// client-go's event broadcaster logs through klog.
	klog.SetLogger(l)
}

func logOutput() io.Writer {
	if os.Getenv(EnvLog) == "1" {
		return os.Stderr
	}
	return io.Discard
}

// Start starts etcd, kube-apiserver, KubeRay's CRDs and operator, and the
// pod-status driver (or, WithPodRunner, a pod runner). Stop releases them.
func Start(ctx context.Context, opts ...Option) (*Env, error) {
	var set settings
	for _, o := range opts {
		o(&set)
	}
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
	// A directory of our own keeps the serving certificates across
	// RestartAPIServer (envtest deletes and regenerates a directory it
	// allocated itself, which would change the CA clients trust).
	certDir, err := os.MkdirTemp("", "kubetest-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	api.CertDir = certDir
	// The serving certificate is ours, not envtest's, so that it names
	// what pods dial: the pod network's route to the API server (made
	// before the API server for that) and the kubernetes Service's names.
	var routes []string
	if set.podRunner != nil {
		network, err := podrunner.NewNetwork(ctx)
		if err != nil {
			os.RemoveAll(certDir)
			return nil, err
		}
		set.podRunner.Network = network
		routes = append(routes, network.Gateway())
	}
	var storage *gcsemu.Server
	// closeNetwork removes the pod network while the runner does not own
	// it, and the object storage.
	closeNetwork := func() error {
		var errs []error
		if storage != nil {
			errs = append(errs, storage.Stop())
		}
		if set.podRunner != nil {
			errs = append(errs, set.podRunner.Network.Close(context.WithoutCancel(ctx)))
		}
		return errors.Join(errs...)
	}
	if set.objectStorage {
		if set.podRunner == nil {
			os.RemoveAll(certDir)
			return nil, errors.New("kubetest: WithObjectStorage needs WithPodRunner: the emulator serves the pods' network")
		}
		if storage, err = startObjectStorage(set.podRunner); err != nil {
			return nil, errors.Join(err, closeNetwork(), os.RemoveAll(certDir))
		}
	}
	if api.SecureServing.CA, err = writeCerts(certDir, routes...); err != nil {
		return nil, errors.Join(err, closeNetwork(), os.RemoveAll(certDir))
	}
	if set.controllerManager {
		// envtest disables the ServiceAccount admission plugin, on in a
		// real API server: with the controller manager's service account
		// controller making each namespace's default account, it gives
		// every pod its account's token and the cluster's CA
		// (kube-api-access-*), which the pod runner mounts.
		api.Configure().Disable("disable-admission-plugins")
	}
	// No controller manages the kubernetes Service's endpoints here.
	api.Configure().Set("endpoint-reconciler-type", "none")
	// A pod runner's nodes are reached at their InternalIP (the pods'
	// bridge), as GKE's control plane reaches its nodes: their hostnames
	// resolve nowhere.
	api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: assets.Etcd}
	cfg, err := te.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("kubetest: starting etcd and kube-apiserver from %s: %w", assets.Dir, err), closeNetwork(), os.RemoveAll(certDir))
	}
	e := &Env{Config: cfg, Scheme: scheme, Assets: assets, env: te, certDir: certDir, Storage: storage}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(err, te.Stop(), closeNetwork(), os.RemoveAll(certDir))
	}
	if set.controllerManager {
		if e.controllers, err = e.startControllerManager(ctx); err != nil {
			return nil, errors.Join(err, te.Stop(), closeNetwork(), os.RemoveAll(certDir))
		}
	}
	if set.podRunner != nil {
		if e.Pods, err = podrunner.Start(ctx, cfg, scheme, *set.podRunner); err != nil {
			return nil, errors.Join(err, e.Stop())
		}
	}
	if e.operator, err = startOperator(ctx, cfg, scheme, e.Pods); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// Stop stops the operator, the pod runner and the controller manager if
// any, then the control plane.
func (e *Env) Stop() error {
	var errs []error
	if e.kueue != nil {
		errs = append(errs, e.kueue.stop())
	}
	if e.operator != nil {
		errs = append(errs, e.operator.stop())
	}
	if e.Pods != nil {
		errs = append(errs, e.Pods.Stop())
	}
	if e.controllers != nil {
		errs = append(errs, e.controllers.stop())
	}
	if e.Storage != nil {
		errs = append(errs, e.Storage.Stop())
	}
	errs = append(errs, e.env.Stop())
	errs = append(errs, os.RemoveAll(e.certDir))
	return errors.Join(errs...)
}

// StopOperator stops KubeRay's controllers and the pod-status driver,
// cancelling any reconcile in flight; StartOperator starts them again as a
// restarted operator pod would (a new manager, empty caches).
func (e *Env) StopOperator() error { return e.operator.stop() }

// StartOperator starts KubeRay's controllers and the pod-status driver
// after StopOperator.
func (e *Env) StartOperator(ctx context.Context) error {
	op, err := startOperator(ctx, e.Config, e.Scheme, e.Pods)
	if err != nil {
		return err
	}
	e.operator = op
	return nil
}

// APIServerStopGrace is how long StopAPIServer waits after SIGTERM before
// it kills kube-apiserver, as a kubelet does after a pod's grace period.
// (kube-apiserver v1.37 closes its listener at once but takes over 30s to
// exit with the operator's watches open.)
const APIServerStopGrace = 5 * time.Second

// StopAPIServer stops kube-apiserver: SIGTERM, then SIGKILL after
// APIServerStopGrace. etcd keeps running, so no object is lost;
// StartAPIServer starts it again on the same address with the same
// certificates, so Config still reaches it.
func (e *Env) StopAPIServer() error {
	api := e.env.ControlPlane.APIServer
	api.StopTimeout = APIServerStopGrace
	err := api.Stop()
	if err != nil && strings.HasPrefix(err.Error(), "timeout waiting for process") {
		err = nil // killed after the grace period
	}
	return err
}

// StartAPIServer starts kube-apiserver after StopAPIServer.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("kubetest: restarting kube-apiserver: %w", err)
	}
	return nil
}
