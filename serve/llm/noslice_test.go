package llm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/gobin"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
)

// noSliceApp is a Serve LLM application file (the command line's form)
// serving the tiny model in dir on a v4 2x2x2 slice (a v4-16), which the
// test cluster does not have.
const noSliceApp = `name: noslice
route_prefix: /noslice
llm_configs:
  - model_loading_config:
      model_id: noslice
      model_source: %s
    accelerator_type: v4
    accelerator_config:
      kind: tpu
      topology: 2x2x2
    engine_kwargs:
      dtype: float32
      enforce_eager: true
      max_model_len: 512
    runtime_env:
      env_vars:
        VLLM_CPU_KVCACHE_SPACE: "1"
`

// noFreeSlice deploys, with the built raytpu command, an LLM application
// whose replica must reserve a v4 2x2x2 slice the cluster cannot give
// (no node offers TPU-v4-16-head): `raytpu serve deploy` sends it,
// `raytpu serve wait` stops it as stuck with the live diagnosis naming the
// pending head reservation of the replica's slice, in the words
// raybackend gives a generic deployment's replica without a slice
// (TestServeLiveDiagnosis), and the backend's Diagnose says the same for
// replica 0 of LLMServer:noslice. `raytpu serve delete` then leaves no
// placement group of it behind.
func noFreeSlice(ctx context.Context, t *testing.T, b *raybackend.Backend, dash, model string) {
	t.Helper()
	bin := gobin.Build(t, filepath.Join(t.TempDir(), "raytpu"), "../../cmd/raytpu")
	file := filepath.Join(t.TempDir(), "noslice.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, noSliceApp, model), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, int) {
		cmd := exec.CommandContext(ctx, bin, append(args, "--address", dash)...)
		out, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("raytpu %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("raytpu %s: exit %d\n%s", strings.Join(args, " "), code, out)
		return string(out), code
	}
	if _, code := cli("serve", "deploy", "-f", file); code != 0 {
		t.Fatalf("raytpu serve deploy -f noslice.yaml: exit %d, want 0", code)
	}
	out, code := cli("serve", "wait", "noslice", "--stuck-after", "1s", "--timeout", "3m")
	if code != 1 || !strings.Contains(out, "Diagnosis:") || !strings.Contains(out, "TPU-v4-16-head") ||
		!strings.Contains(out, `deployment "LLMServer:noslice" replica 0`) {
		t.Errorf("raytpu serve wait noslice: exit %d, want 1 and the diagnosis naming replica 0's pending TPU-v4-16-head reservation", code)
	}

	st, err := b.Diagnose(ctx, "noslice")
	if err != nil {
		t.Fatal(err)
	}
	var reps []string
	for _, d := range st.Deployments {
		reps = append(reps, fmt.Sprintf("%s %s %d/%d %s", d.Name, d.Status, d.Replicas, d.TargetReplicas, d.Message))
	}
	t.Logf("noslice: %s; deployments %q; diagnosis:\n%s", st.State, reps, st.Diagnosis)
	found := slices.ContainsFunc(st.Diagnosis, func(f placement.Finding) bool {
		return f.Severity == placement.SeverityError && f.Part == `deployment "LLMServer:noslice" replica 0` &&
			(f.Code == placement.CodeInfeasible || f.Code == placement.CodeHeadReservationFailed) &&
			strings.Contains(f.Message, "TPU-v4-16-head") && strings.Contains(f.Message, "v4 2x2x2") &&
			strings.Contains(f.Message, "Serve LLM replica") && strings.Contains(f.Message, "no node has resource TPU-v4-16-head")
	})
	if !found {
		t.Errorf("diagnosis of noslice %v, want an error finding for replica 0 of LLMServer:noslice naming the v4 2x2x2 slice's TPU-v4-16-head reservation that no node offers", st.Diagnosis)
	}

	if held, err := headReservations(ctx, dash); err == nil {
		t.Logf("head reservations before the delete: %+v", held)
	}
	if _, code := cli("serve", "delete", "noslice"); code != 0 {
		t.Errorf("raytpu serve delete noslice: exit %d", code)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left, err := headReservations(ctx, dash)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement groups of noslice left 2m after its delete: %+v", left)
		}
		time.Sleep(time.Second)
	}
}

// headReservations lists the placement groups, not REMOVED, that hold
// or wait for a TPU-v4-16-head.
func headReservations(ctx context.Context, dash string) ([]ray.PlacementGroupState, error) {
	rc, err := ray.NewClient(dash)
	if err != nil {
		return nil, err
	}
	pgs, err := rc.PlacementGroups(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pgs, func(pg ray.PlacementGroupState) bool {
		return pg.State == ray.PlacementGroupRemoved ||
			!slices.ContainsFunc(pg.Bundles, func(b ray.PlacementBundle) bool { return b.Resources["TPU-v4-16-head"] > 0 })
	}), nil
}
