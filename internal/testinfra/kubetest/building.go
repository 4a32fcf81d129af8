package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildingFile is the file scripts/setup-kube.sh keeps in <repo>/.cache/kube
// while it runs, holding its process id: make test starts the control
// plane's build beside the tests, and the kube tests wait for it.
const buildingFile = "building"

// maxBuildWait bounds how long FindAssets waits for a running build: a
// cold build of etcd, kube-apiserver and kube-controller-manager takes
// about 20 minutes on a loaded 2-core machine.
const maxBuildWait = 45 * time.Minute

// waitForBuild returns once no scripts/setup-kube.sh runs for the clone
// whose cache link directory is kubeDir (<repo>/.cache/kube): at once when
// none does, else when its process exits, saying once on stderr what it
// waits for. It fails after maxBuildWait.
func waitForBuild(kubeDir string) error {
	marker := filepath.Join(kubeDir, buildingFile)
	start := time.Now()
	said := false
	for {
		pid, running := builder(marker)
		if !running {
			if said {
				fmt.Fprintf(os.Stderr, "kubetest: scripts/setup-kube.sh finished after %v of waiting\n", time.Since(start).Round(time.Second))
			}
			return nil
		}
		if !said {
			fmt.Fprintf(os.Stderr, "kubetest: waiting for scripts/setup-kube.sh (pid %d), which builds the control plane beside the tests\n", pid)
			said = true
		}
		if time.Since(start) > maxBuildWait {
			return fmt.Errorf("kubetest: scripts/setup-kube.sh (pid %d) still building after %v", pid, maxBuildWait)
		}
		time.Sleep(2 * time.Second)
	}
}

// builder reads the marker's process id and says whether that process
// runs. A marker left by a build that was killed names no live process.
func builder(marker string) (int, bool) {
	b, err := os.ReadFile(marker)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return pid, false
	}
	// Signal 0 checks that the process exists without signalling it.
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, syscall.EPERM) {
		return pid, false
	}
	return pid, !zombie(pid)
}

// zombie says whether process pid has exited and waits for its parent to
// reap it (state Z in /proc/<pid>/stat, where there is a /proc). The
// script removes its marker when it exits; a build killed before it could
// leaves one naming such a process until make reaps it.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
