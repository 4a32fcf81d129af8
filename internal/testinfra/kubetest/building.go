package kubetest

import (
	"path/filepath"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/setupwait"
)

// buildingFile is the file scripts/setup-kube.sh keeps in <repo>/.cache/kube
// while it runs, holding its process id: make test starts the control
// plane's build beside the tests, and the kube tests wait for it.
const buildingFile = "building"

// buildingKueueFile is the file scripts/setup-kube.sh keeps there until
// Kueue's controller manager is built too: only StartKueue waits for it,
// so the other kube tests start once the control plane is linked.
const buildingKueueFile = "building-kueue"

// maxBuildWait bounds how long FindAssets waits for a running build: a
// cold build of etcd, kube-apiserver and kube-controller-manager takes
// about 20 minutes on a loaded 2-core machine.
const maxBuildWait = 45 * time.Minute

// waitForBuild returns once no scripts/setup-kube.sh runs for the clone
// whose cache link directory is kubeDir (<repo>/.cache/kube).
func waitForBuild(kubeDir string) error {
	return setupwait.Wait(filepath.Join(kubeDir, buildingFile), "scripts/setup-kube.sh, which builds the control plane beside the tests", maxBuildWait)
}

// waitForKueueBuild returns once no scripts/setup-kube.sh of the clone
// whose cache link directory is kubeDir is still building Kueue.
func waitForKueueBuild(kubeDir string) error {
	return setupwait.Wait(filepath.Join(kubeDir, buildingKueueFile), "scripts/setup-kube.sh, which builds Kueue beside the tests", maxBuildWait)
}
