package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// OperatorModule is the module whose controllers and CRDs the harness runs.
const OperatorModule = "github.com/ray-project/kuberay/ray-operator"

// Assets are the files a control plane needs.
type Assets struct {
	// Dir holds etcd and kube-apiserver.
	Dir string
	// Etcd and APIServer are the binaries.
	Etcd, APIServer string
	// ControllerManager is kube-controller-manager, which only
	// WithControllerManager needs (FindAssets does not check it).
	ControllerManager string
	// CRDs is the directory of KubeRay's CRD manifests.
	CRDs string
	// Kueue is Kueue's controller manager and KueueCRDs its CRD manifests
	// (Kueue's config/components/crd/bases), both built into Dir by
	// scripts/setup-kube.sh; only StartKueue needs them (FindAssets does
	// not check them).
	Kueue, KueueCRDs string
}

// envAssets is envtest's variable naming the binary directory.
const envAssets = "KUBEBUILDER_ASSETS"

// FindAssets locates the control-plane binaries and KubeRay's CRDs. The
// binaries come from $KUBEBUILDER_ASSETS when set, else from the cache
// scripts/setup-kube.sh fills, once the setup-kube.sh that make test
// starts beside the tests has finished; a missing one is an error that
// says how to build it.
func FindAssets() (Assets, error) {
	dir := os.Getenv(envAssets)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return Assets{}, err
		}
		kube := filepath.Join(root, ".cache", "kube")
		if err := waitForBuild(kube); err != nil {
			return Assets{}, err
		}
		dir = filepath.Join(kube, "bin")
	}
	a := Assets{Dir: dir, Etcd: filepath.Join(dir, "etcd"), APIServer: filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Kueue:             filepath.Join(dir, "kueue"), KueueCRDs: filepath.Join(dir, "kueue-crds")}
	for _, bin := range []string{a.Etcd, a.APIServer} {
		if err := checkBinary(bin); err != nil {
			return Assets{}, err
		}
	}
	crds, err := crdDir()
	if err != nil {
		return Assets{}, err
	}
	a.CRDs = crds
	return a, nil
}

// checkBinary fails, saying how to build it, when bin is not an
// executable file.
func checkBinary(bin string) error {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("kubetest: control-plane binary %s is missing (from %s): run scripts/setup-kube.sh (or make test) to build etcd, kube-apiserver and kube-controller-manager", bin, source(filepath.Dir(bin)))
	}
	return nil
}

func source(dir string) string {
	if os.Getenv(envAssets) != "" {
		return "$" + envAssets + "=" + dir
	}
	return "the cache " + dir
}

// repoRoot is the directory of raytpu's go.mod: found from this source
// file, or (when the build trimmed paths) from the working directory up.
func repoRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module "+module+"\n") {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("kubetest: cannot find the go.mod of %s above %v", module, starts)
}

// module is raytpu's module path.
const module = "github.com/raytpu/raytpu"

// crdDir is config/crd/bases of the operator module in the module cache.
func crdDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", OperatorModule)
	if root, err := repoRoot(); err == nil {
		cmd.Dir = root
	}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("kubetest: locating %s: %w (run go mod download)", OperatorModule, err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases")
	if _, err := os.Stat(filepath.Join(dir, "ray.io_rayjobs.yaml")); err != nil {
		return "", fmt.Errorf("kubetest: KubeRay CRDs not found in %s: %w", dir, err)
	}
	return dir, nil
}
