package kuberay_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
)

const queueLabel = "kueue.x-k8s.io/queue-name"

// A queue name puts the label on the RayJob and creates it suspended; no
// queue name, neither (nothing would resume a suspended RayJob).
func TestQueueRendersLabelAndSuspend(t *testing.T) {
	t.Parallel()
	plan := compile(t, trainer("v4", "2x2x2", 1))
	queued, err := kuberay.RenderJob(plan, kuberay.Options{Queue: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := queued.Labels[queueLabel]; got != "team-a" {
		t.Errorf("label %s = %q, want team-a", queueLabel, got)
	}
	if queued.Spec.Suspend == nil || !*queued.Spec.Suspend || !*queued.Spec.ShutdownAfterJobFinishes {
		t.Errorf("suspend %v shutdownAfterJobFinishes %v, want both true", queued.Spec.Suspend, queued.Spec.ShutdownAfterJobFinishes)
	}
	plain, err := kuberay.RenderJob(plan, kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Labels[queueLabel]; ok || plain.Spec.Suspend != nil {
		t.Errorf("no queue: labels %v, suspend %v; want neither", plain.Labels, plain.Spec.Suspend)
	}
	rc, err := kuberay.RenderCluster(slicePlan(t, "reserve", 1), kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.Labels[queueLabel]; ok || rc.Spec.Suspend != nil {
		t.Errorf("no queue: RayCluster labels %v, suspend %v; want neither", rc.Labels, rc.Spec.Suspend)
	}
}

// A queued slice plan's RayCluster, golden; the kube tests apply it.
func TestQueueRenderCluster(t *testing.T) {
	t.Parallel()
	rc, err := kuberay.RenderCluster(slicePlan(t, "reserve", 2), kuberay.Options{Queue: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Labels[queueLabel] != "team-a" || rc.Spec.Suspend == nil || !*rc.Spec.Suspend {
		t.Errorf("labels %v suspend %v, want the queue label and suspend true", rc.Labels, rc.Spec.Suspend)
	}
	y, err := kuberay.MarshalYAML(rc)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "cluster-v6e-4x4-queued.golden.yaml", y)
}

// Bad queue names and the options Kueue refuses beside a queue are
// reported at their option paths, every one at once.
func TestQueueOptionErrors(t *testing.T) {
	t.Parallel()
	auto := &kuberay.Autoscaling{}
	for _, c := range []struct {
		name string
		opts kuberay.Options
		want []string // "path type"
	}{
		{"upper case", kuberay.Options{Queue: "Team-A"}, []string{"options.queue Invalid"}},
		{"underscore", kuberay.Options{Queue: "team_a"}, []string{"options.queue Invalid"}},
		{"leading dash", kuberay.Options{Queue: "-team"}, []string{"options.queue Invalid"}},
		{"64 characters", kuberay.Options{Queue: strings.Repeat("q", 64)}, []string{"options.queue Invalid"}},
		{"space", kuberay.Options{Queue: "team a"}, []string{"options.queue Invalid"}},
		{"control character", kuberay.Options{Queue: "team\x00"}, []string{"options.queue Invalid"}},
		{"existing cluster", kuberay.Options{Queue: "team-a", Cluster: "tpu-pool"}, []string{"options.cluster Forbidden"}},
		{"autoscaling", kuberay.Options{Queue: "team-a", Autoscaling: auto}, []string{"options.autoscaling Forbidden"}},
		{"all", kuberay.Options{Queue: "Team", Autoscaling: auto, Cluster: "tpu-pool"},
			[]string{"options.autoscaling Forbidden", "options.cluster Forbidden", "options.queue Invalid"}},
		{"dots are a subdomain", kuberay.Options{Queue: "team.a"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := kuberay.CheckOptions(c.opts)
			var got []string
			for _, e := range field.Errors(err) {
				if strings.HasPrefix(e.Field, "options.queue") || slices.Contains(c.want, e.Field+" "+string(e.Type)) {
					got = append(got, e.Field+" "+string(e.Type))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("CheckOptions(%+v) = %v; want %v", c.opts, err, c.want)
			}
			if len(c.want) == 0 && err != nil {
				t.Errorf("CheckOptions(%+v) = %v; want nil", c.opts, err)
			}
			if _, rerr := kuberay.Render(compile(t, trainer("v4", "2x2x2", 1)), c.opts, kuberay.RenderInput{}); (rerr == nil) != (err == nil) {
				t.Errorf("Render = %v, CheckOptions = %v: want the same verdict", rerr, err)
			}
		})
	}
}

// A Serve application cannot be queued: Kueue v0.17 queues RayServices
// only with KubeRay v1.6's types.
func TestQueueRefusesRayService(t *testing.T) {
	t.Parallel()
	p := compileApp(t, chatApp(1, nil))
	_, err := kuberay.RenderService(p, kuberay.Options{Queue: "team-a"})
	if !errors.Is(err, backend.ErrUnsupported) || !slices.Equal(fields(err), []string{"options.queue"}) {
		t.Fatalf("RenderService with a queue: %v; want ErrUnsupported at options.queue", err)
	}
	if !strings.Contains(err.Error(), "v1.6") {
		t.Errorf("the error %q does not say which KubeRay Kueue needs", err)
	}
	svc, err := kuberay.RenderService(p, kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc.WithLabels(map[string]string{queueLabel: "team-a"})
	if got := typedFields(kuberay.ValidateService(svc)); !slices.Equal(got, []string{"metadata.labels[" + queueLabel + "] Forbidden"}) {
		t.Errorf("a RayService with the queue label: %v", got)
	}
}

// The rules Kueue's webhooks enforce on a queued RayJob and RayCluster,
// checked on objects as ApplyManifest gets them (a manifest written by
// hand), each at its field path.
func TestQueuedObjectRules(t *testing.T) {
	t.Parallel()
	plan := compile(t, trainer("v4", "2x2x2", 1))
	job := func(t *testing.T) *rayv1ac.RayJobApplyConfiguration {
		j, err := kuberay.RenderJob(plan, kuberay.Options{Queue: "team-a"})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	groups := func(j *rayv1ac.RayJobApplyConfiguration, n int) {
		g := j.Spec.RayClusterSpec.WorkerGroupSpecs[0]
		for i := 1; i < n; i++ {
			c := g
			c.WithGroupName(fmt.Sprintf("tpu-%d", i))
			j.Spec.RayClusterSpec.WithWorkerGroupSpecs(&c)
		}
	}
	spec := "spec.rayClusterSpec"
	for _, c := range []struct {
		name   string
		change func(*rayv1ac.RayJobApplyConfiguration)
		want   string
	}{
		{"not suspended", func(j *rayv1ac.RayJobApplyConfiguration) { j.Spec.WithSuspend(false) }, "spec.suspend Invalid"},
		{"suspend unset", func(j *rayv1ac.RayJobApplyConfiguration) { j.Spec.Suspend = nil }, "spec.suspend Invalid"},
		{"cluster kept", func(j *rayv1ac.RayJobApplyConfiguration) { j.Spec.WithShutdownAfterJobFinishes(false) }, "spec.shutdownAfterJobFinishes Invalid"},
		{"cluster selector", func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.WithClusterSelector(map[string]string{kuberay.ClusterSelectorKey: "pool"})
		}, "spec.clusterSelector Forbidden"},
		{"autoscaler", func(j *rayv1ac.RayJobApplyConfiguration) { j.Spec.RayClusterSpec.WithEnableInTreeAutoscaling(true) }, spec + ".enableInTreeAutoscaling Forbidden"},
		{"7 worker groups", func(j *rayv1ac.RayJobApplyConfiguration) { groups(j, 7) }, spec + ".workerGroupSpecs TooMany"},
		{"group named head", func(j *rayv1ac.RayJobApplyConfiguration) {
			j.Spec.RayClusterSpec.WorkerGroupSpecs[0].WithGroupName("head")
		}, spec + ".workerGroupSpecs[0].groupName Forbidden"},
		{"bad queue label", func(j *rayv1ac.RayJobApplyConfiguration) { j.Labels[queueLabel] = "Team_A" }, "metadata.labels[" + queueLabel + "] Invalid"},
		{"empty queue label", func(j *rayv1ac.RayJobApplyConfiguration) { j.Labels[queueLabel] = "" }, "metadata.labels[" + queueLabel + "] Required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := job(t)
			c.change(j)
			if got := typedFields(kuberay.Validate(j)); !slices.Contains(got, c.want) {
				t.Errorf("errors %v; want %s among them", got, c.want)
			}
		})
	}
	t.Run("6 worker groups", func(t *testing.T) {
		t.Parallel()
		j := job(t)
		groups(j, 6)
		for _, f := range typedFields(kuberay.Validate(j)) {
			if strings.HasSuffix(f, "TooMany") {
				t.Errorf("6 worker groups (8 PodSets with the head and the submitter): %s", f)
			}
		}
	})
	t.Run("RayCluster with 8 worker groups", func(t *testing.T) {
		t.Parallel()
		rc, err := kuberay.RenderCluster(slicePlan(t, "reserve", 1), kuberay.Options{Queue: "team-a"})
		if err != nil {
			t.Fatal(err)
		}
		g := rc.Spec.WorkerGroupSpecs[0]
		for i := 1; i < 8; i++ {
			c := g
			c.WithGroupName(fmt.Sprintf("tpu-%d", i))
			rc.Spec.WithWorkerGroupSpecs(&c)
		}
		rc.Spec.WithSuspend(false)
		got := typedFields(kuberay.ValidateCluster(rc))
		for _, want := range []string{"spec.workerGroupSpecs TooMany", "spec.suspend Invalid"} {
			if !slices.Contains(got, want) {
				t.Errorf("errors %v; want %s among them", got, want)
			}
		}
	})
}

// typedFields are err's field errors as "path Type".
func typedFields(err error) []string {
	var out []string
	for _, e := range field.Errors(err) {
		out = append(out, e.Field+" "+string(e.Type))
	}
	return out
}
