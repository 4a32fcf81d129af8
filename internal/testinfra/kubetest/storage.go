package kubetest

import (
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/raytpu/internal/testinfra/gcsemu"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
)

// startObjectStorage starts the GCS emulator on the pod network's gateway
// (see WithObjectStorage), adds its variables to every pod's image
// environment and, where unset, to the test process's own.
func startObjectStorage(pods *podrunner.Options) (*gcsemu.Server, error) {
	s, err := gcsemu.Start(pods.Network.Gateway())
	if err != nil {
		return nil, err
	}
	for _, kv := range s.Env() {
		pods.ImageEnv = append(pods.ImageEnv, corev1.EnvVar{Name: kv[0], Value: kv[1]})
		if _, set := os.LookupEnv(kv[0]); !set {
			os.Setenv(kv[0], kv[1])
		}
	}
	return s, nil
}
