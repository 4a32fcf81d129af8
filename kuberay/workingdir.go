package kuberay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
	"github.com/raytpu/raytpu/runtimeenv/packaging"
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

// WorkingDir is a local working_dir packed for a ConfigMap.
type WorkingDir struct {
	// Source is the directory packed.
	Source string
	// Zip holds its files under one top-level directory, in path order,
	// with fixed timestamps: the same files give the same bytes.
	Zip []byte
	// SHA256 of Zip, hex.
	SHA256 string
	// Runtime reports whether the zip also holds, at its root, the files
	// of raytpu's launcher for the plan (rayruntime.Files; see
	// packJobWorkingDir): the job then runs rayruntime.Entrypoint there.
	Runtime bool
	// Flat reports that the zip holds its files at its root, with no
	// top-level directory (packSubmittedWorkingDir): the form `ray job
	// submit` uploads for a RayJob on an existing cluster, as Ray unpacks
	// an uploaded package as it is, where it removes the single top-level
	// directory of a mounted file:// one.
	Flat bool

	// rayHash is Ray's content hash of the files (packaging.Zip.Hash).
	rayHash string
	// remote is the gs:// URI of the zip uploaded to
	// Options.PackageBucket instead of a ConfigMap (see inBucket); "" for
	// a ConfigMap's.
	remote string
}

// Key is the ConfigMap key (and file name) of the zip; "" for a nil
// WorkingDir or one PackWorkingDir did not make (no SHA256).
func (w *WorkingDir) Key() string {
	if w == nil || len(w.SHA256) < 16 {
		return ""
	}
	return "wd-" + w.SHA256[:16] + ".zip"
}

// URI is the runtime_env working_dir that points Ray at the mounted zip
// (or at the uploaded one, gs://...); "" when Key is.
func (w *WorkingDir) URI() string {
	if w.Key() == "" {
		return ""
	}
	if w.remote != "" {
		return w.remote
	}
	return "file://" + WorkingDirMountPath + "/" + w.Key()
}

// zipTime dates every entry of a packed working_dir, so that the same files
// give the same zip (and the same RayJob).
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// PackWorkingDir zips dir for a ConfigMap with the packager the Ray
// dashboard backend uses (package packaging): the same files are shipped
// and the same ones refused. Excluded are packaging.DefaultExcludes, excludes
// (gitignore-style patterns, as runtime_env["excludes"]) and what the
// .gitignore and .rayignore files of every directory exclude below it. A
// symbolic link that stays inside dir is followed (the zip holds what it
// points to under the link's name, as Ray's own packager does); one that
// leads outside dir, a link back to a directory holding it, and a named
// pipe, socket or device file are refused with an error naming it, and
// nothing outside dir is read. A zip beyond WorkingDirMaxSize is an error
// matching ErrWorkingDirTooLarge naming both sizes.
func PackWorkingDir(dir string, excludes []string) (*WorkingDir, error) {
	if dir == "" {
		return nil, errors.New("kuberay: PackWorkingDir(\"\"): pass the directory to pack")
	}
	return packWorkingDir(dir, excludes, nil, zipTopDir, WorkingDirMaxSize)
}

// packJobWorkingDir packs the local working_dir of plan p (with its
// runtime_env excludes) as PackWorkingDir does and, when p runs raytpu's
// launcher, adds the launcher's files (rayruntime.Files) at the zip's
// root, as the Ray backend adds them to the package it uploads: every
// node unpacks the working_dir, so the train workers on the TPU hosts
// import the launcher's runtime module as the driver does. A launcher
// plan without a working_dir gets one holding the launcher's files alone,
// as the Ray backend gives it (see shipsWorkingDir).
func packJobWorkingDir(p *placement.Plan) (*WorkingDir, error) {
	return packJobZip(p, zipTopDir, WorkingDirMaxSize)
}

// packSubmittedWorkingDir packs what packJobWorkingDir packs, with the
// files at the zip's root (WorkingDir.Flat): the working_dir of a RayJob
// on an existing cluster (Options.Cluster), which KubeRay's submitter pod
// uploads with `ray job submit`.
func packSubmittedWorkingDir(p *placement.Plan) (*WorkingDir, error) {
	w, err := packJobZip(p, "", WorkingDirMaxSize)
	if err != nil {
		return nil, err
	}
	w.Flat = true
	return w, nil
}

// packJobZip is packJobWorkingDir with the zip's top-level
// directory prefix ("" for none) and size limit.
func packJobZip(p *placement.Plan, prefix string, limit int64) (*WorkingDir, error) {
	env := p.Job.RuntimeEnv
	if p.Job.Launcher == "" {
		return packWorkingDir(env.WorkingDir, env.Excludes, nil, prefix, limit)
	}
	files, err := rayruntime.Files(p)
	if err != nil {
		return nil, err
	}
	dir := env.WorkingDir
	if dir == "" {
		empty, err := os.MkdirTemp("", "raytpu-wd-")
		if err != nil {
			return nil, fmt.Errorf("kuberay: packing the launcher's files: %w", err)
		}
		defer os.RemoveAll(empty)
		dir = empty
	}
	w, err := packWorkingDir(dir, env.Excludes, files, prefix, limit)
	if err != nil {
		return nil, err
	}
	w.Runtime = true
	return w, nil
}

func packWorkingDir(dir string, excludes []string, extra map[string][]byte, prefix string, limit int64) (*WorkingDir, error) {
	t, err := packaging.Walk(dir, packaging.Options{
		Excludes: excludes,
		MaxSize:  limit,
		Prefix:   prefix,
		Modified: zipTime,
		Extra:    extra,
	})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var buf bytes.Buffer
	z, err := t.WriteZip(&buf, nil)
	if err != nil {
		if se := (*packaging.SizeError)(nil); errors.As(err, &se) && limit > WorkingDirMaxSize {
			return nil, fmt.Errorf("kuberay: working_dir %s zips to more than %d bytes: %w", dir, se.Limit, err)
		}
		if se := (*packaging.SizeError)(nil); errors.As(err, &se) {
			return nil, fmt.Errorf("kuberay: working_dir %s zips to more than %d bytes: %w, which holds at most %d bytes (1 MiB); name a bucket to upload it to (Options.PackageBucket, --package-bucket), or upload it yourself (gs://, https://) and use the URI",
				dir, se.Limit, ErrWorkingDirTooLarge, WorkingDirMaxSize)
		}
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &WorkingDir{Source: dir, Zip: buf.Bytes(), SHA256: hex.EncodeToString(sum[:]), rayHash: z.Hash}, nil
}

// workingDirConfigMapName is the ConfigMap holding the working_dir of the
// RayJob named job.
func workingDirConfigMapName(job string) string { return job + "-working-dir" }

// workingDirConfigMap is the ConfigMap that holds w for RayJob job,
// labelled as raytpu's; owner, when set, makes the RayJob own it.
func workingDirConfigMap(job, ns string, w *WorkingDir, planLabels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration) *corev1ac.ConfigMapApplyConfiguration {
	return zipConfigMap(workingDirConfigMapName(job), ns, w.Key(), w.Zip, planLabels, owner)
}

// zipConfigMap is ConfigMap name holding one zip under key, labelled as
// raytpu's and owned by owner when set.
func zipConfigMap(name, ns, key string, zip []byte, planLabels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration) *corev1ac.ConfigMapApplyConfiguration {
	cm := corev1ac.ConfigMap(name, ns).
		WithLabels(planLabels).
		WithBinaryData(map[string][]byte{key: zip})
	if owner != nil {
		cm.WithOwnerReferences(owner)
	}
	return cm
}

// mountWorkingDir adds the working_dir ConfigMap volume to a pod template
// and mounts it read-only into its first (Ray) container.
func mountWorkingDir(t *corev1ac.PodTemplateSpecApplyConfiguration, job string) {
	mountConfigMap(t, workingDirVolume, workingDirConfigMapName(job), WorkingDirMountPath)
}

// mountConfigMap adds ConfigMap cm as volume to a pod template and mounts
// it read-only at path into its first (Ray) container.
func mountConfigMap(t *corev1ac.PodTemplateSpecApplyConfiguration, volume, cm, path string) {
	t.Spec.WithVolumes(corev1ac.Volume().WithName(volume).
		WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(cm)))
	t.Spec.Containers[0].WithVolumeMounts(corev1ac.VolumeMount().
		WithName(volume).WithMountPath(path).WithReadOnly(true))
}

// shipsWorkingDir reports whether the RayJob of plan p carries a packed
// working_dir in a ConfigMap (packJobWorkingDir) when rendered with a
// Kubernetes client at hand (Backend.Apply, Render): a local
// working_dir, or none at all when p runs raytpu's launcher, whose files
// every node must see. A backend without a Kubernetes client writes the
// launcher's files on the head only (in the entrypoint), which a job
// whose workers run on other pods cannot use.
func shipsWorkingDir(p *placement.Plan) bool {
	wd := p.Job.RuntimeEnv.WorkingDir
	return isLocal(wd) || (wd == "" && p.Job.Launcher != "")
}

// isLocal reports whether a working_dir is a local directory.
func isLocal(wd string) bool { return wd != "" && !isURI(wd) }
