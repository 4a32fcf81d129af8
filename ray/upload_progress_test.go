package ray_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

// TestUploadProgress uploads a directory of incompressible files to the
// real dashboard with a progress hook in the context: the reports start at
// zero, grow file by file, end with one Done report of every byte, and the
// zip sent is at least as large as the files. The same directory again is
// on the cluster already: no report.
func TestUploadProgress(t *testing.T) {
	t.Parallel()
	c := realClient(t)
	dir := t.TempDir()
	var total int64
	for i, size := range []int{300 << 10, 200 << 10, 100 << 10} {
		b := make([]byte, size)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))+".bin"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		total += int64(size)
	}
	var mu sync.Mutex
	var got []ray.UploadProgress
	ctx := ray.WithUploadProgress(t.Context(), func(p ray.UploadProgress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	})
	uri, uploaded, err := c.UploadDir(ctx, dir, ray.PackageOptions{})
	if err != nil || !uploaded {
		t.Fatalf("UploadDir = %q, %t, %v; want an upload", uri, uploaded, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("%d reports, want a start, one per file and a done: %+v", len(got), got)
	}
	first, last := got[0], got[len(got)-1]
	if first.Packed != 0 || first.Total != total || first.Attempt != 1 || first.URI != uri || first.Done {
		t.Errorf("first report %+v, want Packed 0 of Total %d, attempt 1, URI %s", first, total, uri)
	}
	if !last.Done || last.Packed != total || last.Total != total || last.Sent < total {
		t.Errorf("last report %+v, want Done with Packed = Total = %d and Sent >= %d (random bytes do not compress)", last, total, total)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Packed < got[i-1].Packed || got[i].Sent < got[i-1].Sent {
			t.Errorf("report %d went back: %+v after %+v", i, got[i], got[i-1])
		}
	}
	for _, p := range got[:len(got)-1] {
		if p.Done {
			t.Errorf("Done before the last report: %+v", p)
		}
	}
	n := len(got)
	mu.Unlock()
	if _, uploaded, err := c.UploadDir(ctx, dir, ray.PackageOptions{}); err != nil || uploaded {
		t.Fatalf("second UploadDir uploaded=%t err=%v, want the cluster's copy", uploaded, err)
	}
	mu.Lock()
	if len(got) != n {
		t.Errorf("a package already on the cluster was reported: %+v", got[n:])
	}
}

// A working_dir's upload reports its bytes through the context, here as a
// percentage of the files' size. (It needs a running cluster, so it has no
// Output to check.)
func ExampleWithUploadProgress() {
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		panic(err)
	}
	ctx := ray.WithUploadProgress(context.Background(), func(p ray.UploadProgress) {
		if p.Total > 0 {
			fmt.Printf("%s: %d%% of %d bytes (%d sent)\n", p.URI, 100*p.Packed/p.Total, p.Total, p.Sent)
		}
	})
	env, err := c.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{WorkingDir: "./my_job"}, ray.PackageOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("working_dir:", env.WorkingDir)
}
