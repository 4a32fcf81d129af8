package kuberay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv/packaging"
)

// A local working_dir that goes to Options.PackageBucket instead of a
// ConfigMap: packed as for a RayJob's own cluster (one top-level
// directory, which Ray removes from a gs:// zip as from a file:// one),
// uploaded once under Ray's content-addressed package name, and named in
// runtime_env by its gs:// URI, which Ray's runtime_env fetches on every
// node (smart_open and google-cloud-storage). Nothing is mounted.

// WorkingDirMaxUploadSize bounds a working_dir zip uploaded to
// Options.PackageBucket.
const WorkingDirMaxUploadSize = 512 << 20

// uploadTimeout bounds one upload, its existence check included.
const uploadTimeout = 10 * time.Minute

// bucketRE is a Cloud Storage bucket name (lower-case letters, digits,
// dashes, underscores and dots; 3 to 222 characters, starting and ending
// with a letter or digit).
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$`)

// splitBucket splits Options.PackageBucket, gs://bucket[/prefix], into the
// bucket and the object prefix ("" or ending in "/").
func splitBucket(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, "gs://")
	if !ok {
		return "", "", errors.New("a Cloud Storage bucket, gs://bucket or gs://bucket/prefix")
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if !bucketRE.MatchString(bucket) {
		return "", "", fmt.Errorf("%q is not a Cloud Storage bucket name (3 to 222 lower-case letters, digits, -, _ and .)", bucket)
	}
	if strings.ContainsFunc(prefix, isControl) || strings.Contains(prefix, "//") {
		return "", "", errors.New("an object prefix has no control characters and no empty segment")
	}
	if prefix = strings.TrimSuffix(prefix, "/"); prefix != "" {
		prefix += "/"
	}
	return bucket, prefix, nil
}

// inBucket makes w a working_dir uploaded to bucket (Options.PackageBucket):
// its URI becomes gs://bucket/prefix/_ray_pkg_<hash>.zip.
func (w *WorkingDir) inBucket(bucket string) error {
	b, prefix, err := splitBucket(bucket)
	if err != nil {
		return err
	}
	w.remote = "gs://" + b + "/" + prefix + packaging.PackageName(w.rayHash)
	return nil
}

// packJobForBucket packs a job's working_dir (with the launcher's files)
// for Options.PackageBucket.
func packJobForBucket(p *placement.Plan, bucket string) (*WorkingDir, error) {
	w, err := packJobZip(p, zipTopDir, WorkingDirMaxUploadSize)
	if err != nil {
		return nil, err
	}
	return w, w.inBucket(bucket)
}

// packServiceWorkingDir packs a Serve application's local working_dir:
// for a ConfigMap (PackWorkingDir), or for bucket when one is named.
func packServiceWorkingDir(dir string, excludes []string, bucket string) (*WorkingDir, error) {
	if bucket == "" {
		return PackWorkingDir(dir, excludes)
	}
	w, err := packWorkingDir(dir, excludes, nil, zipTopDir, WorkingDirMaxUploadSize)
	if err != nil {
		return nil, err
	}
	return w, w.inBucket(bucket)
}

// upload writes w's zip at its gs:// URI unless an object of that name is
// there: the name is the content's, so an object that has it holds the
// same files. It reports whether it wrote the object.
func (w *WorkingDir) upload(ctx context.Context) (bool, error) {
	bucket, object, _ := strings.Cut(strings.TrimPrefix(w.remote, "gs://"), "/")
	if bucket == "" || object == "" {
		return false, fmt.Errorf("kuberay: working_dir %s has no bucket to go to", w.Source)
	}
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	c, err := storage.NewClient(ctx)
	if err != nil {
		return false, fmt.Errorf("kuberay: a Cloud Storage client for uploading the working_dir to %s (credentials are found as every Google client finds them: Application Default Credentials): %w", w.remote, err)
	}
	defer c.Close()
	obj := c.Bucket(bucket).Object(object)
	switch _, err := obj.Attrs(ctx); {
	case err == nil:
		return false, nil
	case !errors.Is(err, storage.ErrObjectNotExist):
		return false, fmt.Errorf("kuberay: looking for the working_dir's package %s: %w", w.remote, err)
	}
	// DoesNotExist: a concurrent upload of the same files wins, and this
	// one is refused (412) instead of writing them again.
	ow := obj.If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
	ow.ContentType = "application/zip"
	if _, err := ow.Write(w.Zip); err != nil {
		ow.Close()
		return false, fmt.Errorf("kuberay: uploading the working_dir's package %s: %w", w.remote, err)
	}
	if err := ow.Close(); err != nil {
		if ge := (*googleapi.Error)(nil); errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
			return false, nil
		}
		return false, fmt.Errorf("kuberay: uploading the working_dir's package %s: %w", w.remote, err)
	}
	return true, nil
}
