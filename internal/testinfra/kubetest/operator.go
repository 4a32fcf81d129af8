package kubetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	configapi "github.com/ray-project/kuberay/ray-operator/apis/config/v1alpha1"
	ray "github.com/ray-project/kuberay/ray-operator/controllers/ray"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/pkg/features"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// FeatureGates are the KubeRay feature gates the harness turns on:
// RayMultiHostIndexing labels each pod of a multi-host slice with its
// replica and host index and treats the slice as one unit.
var FeatureGates = map[string]bool{string(features.RayMultiHostIndexing): true}

// operator is KubeRay's controllers plus the pod-status driver, in one
// controller-runtime manager.
type operator struct {
	cancel context.CancelFunc
	done   chan error
	err    error
	once   sync.Once
}

// startOperator starts KubeRay's controllers and, without a pod runner,
// the pod-status driver.
func startOperator(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, pods *podrunner.Runner) (*operator, error) {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(FeatureGates); err != nil {
		return nil, fmt.Errorf("kubetest: setting KubeRay feature gates %v: %w", FeatureGates, err)
	}
	mgr, err := ctrl.NewManager(cfg, podrunner.ManagerOptions(scheme))
	if err != nil {
		return nil, fmt.Errorf("kubetest: creating the operator's manager: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// The operator's own configuration type is its dashboard and HTTP proxy
	// client provider: the real clients, as the deployed operator uses.
	var provider rayutils.ClientProvider = configapi.Configuration{}
	if pods != nil {
		provider = newDialingProvider(pods.DialContext)
	}
	setups := []struct {
		name  string
		setup func() error
	}{
		{"RayCluster", func() error {
			return ray.NewReconciler(ctx, mgr, ray.RayClusterReconcilerOptions{}).SetupWithManager(mgr, 1)
		}},
		{"RayJob", func() error {
			return ray.NewRayJobReconciler(ctx, mgr, ray.RayJobReconcilerOptions{}, provider).SetupWithManager(mgr, 1)
		}},
		{"RayService", func() error {
			return ray.NewRayServiceReconciler(ctx, mgr, provider).SetupWithManager(mgr, 1)
		}},
	}
	if pods == nil {
		setups = append(setups, struct {
			name  string
			setup func() error
		}{"pod status driver", func() error { return setupPodDriver(mgr) }})
	}
	for _, s := range setups {
		if err := s.setup(); err != nil {
			cancel()
			return nil, fmt.Errorf("kubetest: setting up the %s controller: %w", s.name, err)
		}
	}
	op := &operator{cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	// The caches' sync is the operator's readiness; a loaded machine may
	// take minutes to list every watched type.
	sync, stop := context.WithTimeout(ctx, cacheSyncTimeout)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(sync) {
		cancel()
		return nil, errors.Join(fmt.Errorf("kubetest: the operator's caches did not sync within %v", cacheSyncTimeout), <-op.done)
	}
	return op, nil
}

// cacheSyncTimeout bounds the wait for the operator's informer caches.
const cacheSyncTimeout = 3 * time.Minute

// stop stops the manager; stopping it again returns the first answer.
func (o *operator) stop() error {
	o.once.Do(func() {
		o.cancel()
		select {
		case o.err = <-o.done:
		case <-time.After(30 * time.Second):
			o.err = errors.New("kubetest: the operator did not stop within 30s")
		}
	})
	return o.err
}
