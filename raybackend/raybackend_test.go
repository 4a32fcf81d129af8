package raybackend_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/syncbuf"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
)

func jobPlan(name, entrypoint string) *placement.Plan {
	return &placement.Plan{
		APIVersion: placement.APIVersion, Kind: placement.KindPipeline, Name: name, Slices: []*placement.SliceGroup{},
		Job: &placement.Job{Entrypoint: entrypoint, RuntimeEnv: runtimeenv.RuntimeEnv{EnvVars: map[string]string{"RAYTPU_MARK": name}}},
	}
}

// Plans a Ray cluster cannot run are refused before anything is sent: the
// client points at a port where nothing listens, so a request would fail
// with a connection error instead of the typed refusals checked here.
func TestRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	b := unreachable(t)
	service := jobPlan("svc", "true")
	service.Kind = placement.KindApplication
	launcherAtURI := jobPlan("uri", "")
	launcherAtURI.Job.Launcher = "train"
	launcherAtURI.Job.RuntimeEnv.WorkingDir = "gcs://_ray_pkg_0123456789abcdef.zip"
	noJob := jobPlan("nojob", "true")
	noJob.Job = nil
	cases := []struct {
		name string
		plan *placement.Plan
		want []error
		// field is the field error an invalid plan carries.
		field string
	}{
		{"nil plan", nil, []error{backend.ErrInvalidPlan}, "plan"},
		{"no job", noJob, []error{backend.ErrInvalidPlan}, "plan.job"},
		{"a slice plan", &placement.Plan{Kind: placement.KindSlicePlacementGroup, Name: "slices"}, []error{backend.ErrUnsupported}, ""},
		{"a service", service, []error{backend.ErrUnsupported}, ""},
		{"launcher with a URI working_dir", launcherAtURI, []error{backend.ErrInvalidPlan, ray.ErrInvalid}, "plan.job.runtimeEnv.workingDir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := b.Run(t.Context(), c.plan, backend.RunOptions{})
			for _, want := range c.want {
				if !errors.Is(err, want) || out != nil {
					t.Errorf("Run = %v, %v; want no outcome and an error matching %v", out, err, want)
				}
			}
			if fields := field.Errors(err); c.field != "" && (len(fields) != 1 || fields[0].Field != c.field) {
				t.Errorf("Run = %v; want the field error of %s", err, c.field)
			}
		})
	}
}

// A job plan on a real Ray cluster: it runs, its log streams, its states
// are reported, a failure is a typed error, and a retried Run with the same
// submission id follows the job it already submitted. It shares
// headCluster with TestConformanceOnRealRay.
func TestRunOnRealRay(t *testing.T) {
	cluster := headCluster.Get(t)
	client, err := ray.NewClient(cluster.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	requireCleanHead(t, client)
	b, err := raybackend.New(client, raybackend.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}

	// The cluster is shared: a submission id of this run only, so that a
	// job of an earlier run (go test -count) is never followed instead.
	okID := "raybackend-ok-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Run("succeeds", func(t *testing.T) {
		var logs syncbuf.Buffer
		var states []backend.State
		opts := backend.RunOptions{
			SubmissionID: okID,
			Logs:         &logs,
			OnStatus:     func(s backend.Status) { states = append(states, s.State) },
		}
		plan := jobPlan("ok", `python -c "import os; print('mark=' + os.environ['RAYTPU_MARK'])"`)
		out, err := b.Run(t.Context(), plan, opts)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !out.Ran || !out.Succeeded() || out.Backend != raybackend.Name || out.ID != okID || out.Output != nil {
			t.Errorf("outcome = %+v, want a SUCCEEDED run of %s without launcher output", out, okID)
		}
		if !strings.Contains(logs.String(), "mark=ok") {
			t.Errorf("streamed log %q lacks the job's output mark=ok", logs.String())
		}
		if len(states) == 0 || states[len(states)-1] != backend.StateSucceeded {
			t.Errorf("states seen = %v, want them to end SUCCEEDED", states)
		}

		// The retry: same id, same plan. Ray answers the duplicate
		// submission; the backend follows the existing job.
		again, err := b.Run(t.Context(), plan, backend.RunOptions{SubmissionID: okID})
		if err != nil || !again.Succeeded() || again.ID != okID {
			t.Fatalf("retried Run = %+v, %v; want the same SUCCEEDED job", again, err)
		}
		jobs, err := client.ListJobs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range jobs {
			if j.SubmissionID == okID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d jobs with submission id %s, want exactly 1", n, okID)
		}

		// The same id for another plan is refused, not followed.
		other := jobPlan("other", "true")
		if out, err := b.Run(t.Context(), other, backend.RunOptions{SubmissionID: okID}); !errors.Is(err, ray.ErrAlreadyExists) || !errors.Is(err, backend.ErrAlreadyExists) || out != nil {
			t.Errorf("Run of another plan under %s = %+v, %v; want backend.ErrAlreadyExists and ray.ErrAlreadyExists", okID, out, err)
		}
		// A job Ray does not know is the contract's ErrNotFound too.
		if out, err := b.WaitRun(t.Context(), "raybackend-never-submitted", backend.RunOptions{}); !errors.Is(err, backend.ErrNotFound) || !errors.Is(err, ray.ErrNotFound) || out != nil {
			t.Errorf("WaitRun of an unknown job = %+v, %v; want backend.ErrNotFound and ray.ErrNotFound", out, err)
		}
	})

	t.Run("gs working_dir", func(t *testing.T) { gsWorkingDirOnRealRay(t, b) })

	t.Run("fails", func(t *testing.T) {
		out, err := b.Run(t.Context(), jobPlan("bad", `python -c "import sys; sys.exit(3)"`), backend.RunOptions{})
		var re *backend.RunError
		if !errors.As(err, &re) || !errors.Is(err, backend.ErrRunFailed) {
			t.Fatalf("Run = %v; want a *backend.RunError", err)
		}
		if out == nil || out.State != backend.StateFailed || re.Outcome != out || !out.Ran {
			t.Errorf("outcome = %+v, want the FAILED run, the same as the error's", out)
		}
	})

	t.Run("serve", func(t *testing.T) { serveOnRealRay(t, cluster, client, b) })

	t.Run("launcher result", func(t *testing.T) {
		// A launcher job whose launcher entry does not exist: the launcher
		// reports the error on its result line, which comes back as Output.
		plan := jobPlan("launcher", "")
		plan.Job.Launcher = "no-such-launcher"
		plan.Job.LauncherConfig = json.RawMessage(`{}`)
		out, err := b.Run(t.Context(), plan, backend.RunOptions{})
		if out == nil || len(out.Output) == 0 {
			t.Fatalf("Run = %+v, %v; want the launcher's result line as Output", out, err)
		}
		var doc struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		if jerr := json.Unmarshal(out.Output, &doc); jerr != nil || doc.Error.Type != "ValueError" || !strings.Contains(doc.Error.Message, "no-such-launcher") {
			t.Errorf("Output = %s, want the launcher's ValueError naming no-such-launcher", out.Output)
		}
	})
}
