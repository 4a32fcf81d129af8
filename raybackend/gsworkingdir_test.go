package raybackend_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/raybackend"
)

// gsWorkingDirOnRealRay runs a job whose working_dir is a gs:// zip larger
// than a ConfigMap holds (1.5 MiB that does not compress), in the GCS
// emulator the head's processes are pointed at: Ray's runtime_env fetches
// it (smart_open and google-cloud-storage, STORAGE_EMULATOR_HOST),
// removes its top-level directory, and the job runs in it.
func gsWorkingDirOnRealRay(t *testing.T, b *raybackend.Backend) {
	const size = 3 << 19
	big := make([]byte, size)
	rand.Read(big)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range map[string][]byte{
		"code/main.py":     []byte("import os\nprint('gs-mark=%d' % os.path.getsize('weights.bin'))\n"),
		"code/weights.bin": big,
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	bucket := "raybackend-code-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	storage.CreateBucket(bucket)
	storage.Write(bucket, "packages/code.zip", buf.Bytes())

	plan := jobPlan("gs", "python main.py")
	plan.Job.RuntimeEnv.WorkingDir = "gs://" + bucket + "/packages/code.zip"
	var logs syncbuf.Buffer
	id := "raybackend-gs-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out, err := b.Run(t.Context(), plan, backend.RunOptions{SubmissionID: id, Logs: &logs})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, logs.String())
	}
	if !out.Succeeded() || !strings.Contains(logs.String(), "gs-mark="+strconv.Itoa(size)) {
		t.Errorf("outcome %+v, log %q: want a SUCCEEDED job that saw its %d-byte file from gs://", out, logs.String(), size)
	}
}
