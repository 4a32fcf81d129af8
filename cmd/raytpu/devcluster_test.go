package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/gobin"
)

// TestDevClusterOutsideTheRepoOnRealRay is the newcomer's path on the
// built binary: `go install` the command, then, from a directory outside
// any Go module, `raytpu dev-cluster up --cluster '2*v4-16,v4-8'` and at
// once `raytpu top --once`, which must see every slice, host and chip with
// its HBM total (READY means every reader sees every node). Ray comes from
// the raytpu cache that scripts/setup-venv.sh fills (package pyenv), not
// from the clone. A task spinning on a TPU host moves its chips' duty cycle
// (the emulators follow the work). `dev-cluster down` must leave no process
// behind.
func TestDevClusterOutsideTheRepoOnRealRay(t *testing.T) {
	bin := gobin.Install(t, t.TempDir(), ".")

	// Outside the repository: no go.mod above, and a TMPDIR of its own so
	// the default state file (and so the default --address) is this
	// test's alone.
	work := t.TempDir()
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TMPDIR", "RAYTPU_VENV", "RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "VIRTUAL_ENV":
			continue
		}
		env = append(env, kv)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir, cmd.Env = work, env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			t.Logf("raytpu %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String(), err
	}

	start := time.Now()
	if _, err := run("dev-cluster", "up", "--cluster", "2*v4-16,v4-8"); err != nil {
		t.Fatal("dev-cluster up failed")
	}
	t.Logf("dev-cluster up took %v", time.Since(start).Round(time.Second))
	state := filepath.Join(tmp, "raytpu-dev-cluster.json")
	downed := false
	t.Cleanup(func() {
		if !downed {
			_, _ = run("dev-cluster", "down")
		}
	})
	var st struct {
		ID string `json:"id"`
	}
	if b, err := os.ReadFile(state); err != nil || json.Unmarshal(b, &st) != nil || st.ID == "" {
		t.Fatalf("no dev-cluster state in %s: %v", state, err)
	}

	out, err := run("top", "--once", "-o", "json")
	if err != nil {
		t.Fatal("top --once failed right after up")
	}
	var reading struct {
		Slices []struct {
			Name    string `json:"name"`
			PodType string `json:"podType"`
			Hosts   []struct {
				Err   string `json:"error"`
				Chips []struct {
					HBMTotal  int64   `json:"hbmTotal"`
					HBMUsed   int64   `json:"hbmUsed"`
					DutyCycle float64 `json:"dutyCycle"`
				} `json:"chips"`
			} `json:"hosts"`
		} `json:"slices"`
	}
	if err := json.Unmarshal([]byte(out), &reading); err != nil {
		t.Fatalf("top -o json: %v\n%s", err, out)
	}
	hosts, chips := 0, 0
	const v4HBM = 32 << 30 // bytes of HBM per v4 chip (tpu catalog)
	idleDuty, idleHBM := 0.0, int64(0)
	for _, s := range reading.Slices {
		for _, h := range s.Hosts {
			hosts++
			if h.Err != "" {
				t.Errorf("slice %s: host error %q", s.Name, h.Err)
			}
			for _, c := range h.Chips {
				chips++
				idleDuty, idleHBM = max(idleDuty, c.DutyCycle), max(idleHBM, c.HBMUsed)
				if c.HBMTotal != v4HBM {
					t.Errorf("slice %s: chip HBM total %d, want %d", s.Name, c.HBMTotal, v4HBM)
				}
			}
		}
	}
	if len(reading.Slices) != 3 || hosts != 5 || chips != 20 {
		t.Errorf("top right after up: %d slices, %d hosts, %d chips; want 3, 5, 20\n%s", len(reading.Slices), hosts, chips, out)
	}

	// The emulators follow the work: a task holding one host's 4 TPU
	// chips that holds 1 GiB and spins for a while moves that host's
	// HBM used (its workers' resident memory over its chips: 256 MiB each,
	// whatever the machine's load) and its duty cycle (their CPU, which a
	// loaded machine shares out: at load 46 on 2 cores a spinning task was
	// seen to get 21% of a core) above what the idle cluster showed.
	var state2 struct {
		GCS  string `json:"gcs_address"`
		Venv string `json:"venv"`
	}
	if b, err := os.ReadFile(state); err != nil || json.Unmarshal(b, &state2) != nil {
		t.Fatalf("dev-cluster state %s: %v", state, err)
	}
	driver := exec.CommandContext(t.Context(), filepath.Join(state2.Venv, "bin", "python"), "-c", `
import ray, time
ray.init(address="`+state2.GCS+`", logging_level="ERROR")
@ray.remote(resources={"TPU": 4}, num_cpus=0)
def spin(seconds):
    held = bytearray(b"\x01") * (1024 << 20)
    end = time.time() + seconds
    while time.time() < end:
        pass
ray.get(spin.remote(60))
`)
	driver.Dir, driver.Env = work, env
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = driver.Process.Kill(); _ = driver.Wait() }()
	wantBusy, wantHBM := idleDuty+2, idleHBM+100<<20
	busy, hbm := 0.0, int64(0)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && (busy < wantBusy || hbm < wantHBM); time.Sleep(2 * time.Second) {
		out, err := run("top", "--once", "-o", "json")
		if err != nil {
			continue
		}
		var r struct {
			Slices []struct {
				Hosts []struct {
					Chips []struct {
						DutyCycle float64 `json:"dutyCycle"`
						HBMUsed   int64   `json:"hbmUsed"`
					} `json:"chips"`
				} `json:"hosts"`
			} `json:"slices"`
		}
		if json.Unmarshal([]byte(out), &r) != nil {
			continue
		}
		for _, s := range r.Slices {
			for _, h := range s.Hosts {
				for _, c := range h.Chips {
					busy, hbm = max(busy, c.DutyCycle), max(hbm, c.HBMUsed)
				}
			}
		}
	}
	if busy < wantBusy {
		t.Errorf("no chip's duty cycle reached %.0f%% (idle: at most %.0f%%) within 60 s of a task spinning on a TPU host (highest %.0f%%)", wantBusy, idleDuty, busy)
	}
	if hbm < wantHBM {
		t.Errorf("no chip's HBM used reached %d MiB (idle: at most %d MiB) within 60 s of a task holding 1 GiB on a TPU host (highest %d MiB)", wantHBM>>20, idleHBM>>20, hbm>>20)
	}
	t.Logf("a task spinning with 1 GiB moved a chip's duty cycle from %.0f%% to %.0f%% and its HBM used from %d to %d MiB", idleDuty, busy, idleHBM>>20, hbm>>20)
	_ = driver.Process.Kill()

	if _, err := run("dev-cluster", "down"); err != nil {
		t.Fatal("dev-cluster down failed")
	}
	downed = true
	if left := markedProcesses(st.ID); len(left) > 0 {
		t.Errorf("processes of the dev cluster left after down: %v", left)
	}
}

// markedProcesses lists the pids whose environment carries the dev
// cluster's marker (RAYTPU_DEVCLUSTER=<id>/...): nodes, workers and the
// device-plugin emulators alike.
func markedProcesses(id string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "RAYTPU_DEVCLUSTER="+id+"/") {
			out = append(out, e.Name())
		}
	}
	return out
}
