package kuberay

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// How a local working_dir reaches a KubeRay cluster.
//
// kubectl ray job submit ships one by creating the RayJob in
// InteractiveMode, port-forwarding the head's dashboard once the RayCluster
// is ready and running the local `ray job submit --working-dir` through it
// (kuberay kubectl-plugin/pkg/cmd/job/job_submit.go): it needs the ray CLI
// on the caller's machine and a reachable head, and the upload dies with
// the port-forward. raytpu instead zips the directory into a ConfigMap
// that every Ray container (head and TPU workers) mounts read-only at
// WorkingDirMountPath, and points runtime_env working_dir at the zip with
// a file:// URI, which Ray (2.60) fetches like any remote package: each
// node opens the file locally and unpacks it, dropping the zip's single
// top-level directory. The ConfigMap is owned by the RayJob, so it goes
// with it.
const (
	// WorkingDirMaxSize is the largest zip a ConfigMap holds: Kubernetes
	// rejects a ConfigMap whose data and binaryData exceed 1 MiB
	// (core.MaxSecretSize, ValidateConfigMap).
	WorkingDirMaxSize = 1 << 20
	// WorkingDirMountPath is where Ray containers mount the ConfigMap.
	WorkingDirMountPath = "/raytpu/working_dir"
	// workingDirVolume names the pod volume.
	workingDirVolume = "raytpu-working-dir"
	// zipTopDir is the zip's top-level directory, which Ray removes.
	zipTopDir = "working_dir/"
)

// ErrWorkingDirTooLarge means a local working_dir zips to more than
// WorkingDirMaxSize bytes.
var ErrWorkingDirTooLarge = errors.New("the working_dir is too large for a ConfigMap")

// DefaultExcludes are left out of every packed working_dir, as Ray's
// clients leave them out (RAY_RUNTIME_ENV_DEFAULT_EXCLUDES).
var DefaultExcludes = []string{".git", ".venv", "venv", "__pycache__"}

// WorkingDir is a local working_dir packed for a ConfigMap.
type WorkingDir struct {
	// Source is the directory packed.
	Source string
	// Zip holds its files under one top-level directory, in path order,
	// with fixed timestamps: the same files give the same bytes.
	Zip []byte
	// SHA256 of Zip, hex.
	SHA256 string
}

// Key is the ConfigMap key (and file name) of the zip.
func (w *WorkingDir) Key() string { return "wd-" + w.SHA256[:16] + ".zip" }

// URI is the runtime_env working_dir that points Ray at the mounted zip.
func (w *WorkingDir) URI() string { return "file://" + WorkingDirMountPath + "/" + w.Key() }

// PackWorkingDir zips dir for a ConfigMap. Files and directories whose
// base name or slash-separated path relative to dir matches a pattern of
// DefaultExcludes or excludes (path.Match syntax) are left out; symbolic
// links are followed only to regular files. A zip beyond WorkingDirMaxSize
// is an error matching ErrWorkingDirTooLarge naming both sizes.
func PackWorkingDir(dir string, excludes []string) (*WorkingDir, error) {
	patterns := append(slices.Clone(DefaultExcludes), excludes...)
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("kuberay: working_dir exclude pattern %q: %w", p, err)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	stamp := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if excluded(rel, patterns) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			_, err := zw.CreateHeader(&zip.FileHeader{Name: zipTopDir + rel + "/", Modified: stamp})
			return err
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: zipTopDir + rel, Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if buf.Len() > WorkingDirMaxSize {
			return tooLarge(dir, fmt.Sprintf("more than %d bytes", buf.Len()))
		}
		return nil
	})
	if err == nil {
		err = zw.Close()
	}
	if errors.Is(err, ErrWorkingDirTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("kuberay: packing working_dir %s: %w", dir, err)
	}
	if buf.Len() > WorkingDirMaxSize {
		return nil, tooLarge(dir, fmt.Sprintf("%d bytes", buf.Len()))
	}
	sum := sha256.Sum256(buf.Bytes())
	return &WorkingDir{Source: dir, Zip: buf.Bytes(), SHA256: hex.EncodeToString(sum[:])}, nil
}

func tooLarge(dir, size string) error {
	return fmt.Errorf("kuberay: working_dir %s zips to %s: %w, which holds at most %d bytes (1 MiB); upload it (gs://, https://) and use the URI",
		dir, size, ErrWorkingDirTooLarge, WorkingDirMaxSize)
}

func excluded(rel string, patterns []string) bool {
	base := path.Base(rel)
	for _, p := range patterns {
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return false
}

// WorkingDirConfigMapName is the ConfigMap holding the working_dir of the
// RayJob named job.
func WorkingDirConfigMapName(job string) string { return job + "-working-dir" }

// WorkingDirConfigMap is the ConfigMap that holds w for RayJob job,
// labelled as raytpu's; owner, when set, makes the RayJob own it.
func WorkingDirConfigMap(job, ns string, w *WorkingDir, planLabels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration) *corev1ac.ConfigMapApplyConfiguration {
	cm := corev1ac.ConfigMap(WorkingDirConfigMapName(job), ns).
		WithLabels(planLabels).
		WithBinaryData(map[string][]byte{w.Key(): w.Zip})
	if owner != nil {
		cm.WithOwnerReferences(owner)
	}
	return cm
}

// mountWorkingDir adds the working_dir ConfigMap volume to a pod template
// and mounts it read-only into its first (Ray) container.
func mountWorkingDir(t *corev1ac.PodTemplateSpecApplyConfiguration, job string) {
	t.Spec.WithVolumes(corev1ac.Volume().WithName(workingDirVolume).
		WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(WorkingDirConfigMapName(job))))
	t.Spec.Containers[0].WithVolumeMounts(corev1ac.VolumeMount().
		WithName(workingDirVolume).WithMountPath(WorkingDirMountPath).WithReadOnly(true))
}

// isLocal reports whether a working_dir is a local directory.
func isLocal(wd string) bool { return wd != "" && !isURI(wd) }
