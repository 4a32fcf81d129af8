package setupwait_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/setupwait"
)

// Wait waits for a setup script that is still running (its pid in the
// marker file) and no longer; a marker of a process that has gone, or
// none, does not hold it up.
func TestWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "building")
	if err := setupwait.Wait(marker, "the script", time.Minute); err != nil {
		t.Fatalf("no marker: %v", err)
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte(strconv.Itoa(gone.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := setupwait.Wait(marker, "the script", time.Minute); err != nil || time.Since(start) > time.Second {
		t.Fatalf("marker of an exited process: waited %v, err %v; want no wait", time.Since(start), err)
	}

	build := exec.Command("sleep", "3")
	if err := build.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan time.Time, 1)
	go func() { build.Wait(); exited <- time.Now() }()
	if err := os.WriteFile(marker, []byte(strconv.Itoa(build.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setupwait.Wait(marker, "the script", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("Wait returned while the build still ran")
	}

	// A build that exited but is not reaped yet (its parent, make, waits
	// for it only after the tests) is a zombie: no wait.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(marker, []byte(strconv.Itoa(zombie.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := setupwait.Wait(marker, "the script", time.Minute); err != nil || time.Since(start) > time.Second {
		t.Fatalf("marker of an unreaped process: waited %v, err %v; want no wait", time.Since(start), err)
	}
}
