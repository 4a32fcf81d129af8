package kuberay_test

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
)

// withCapacity is plan p with capacity c of its own.
func withCapacity(p *placement.Plan, c placement.Capacity) *placement.Plan {
	p.Capacity = c
	return p
}

// slicePlanOf is a slice plan of n slices of one shape.
func slicePlanOf(t *testing.T, accel, topo string, n int) *placement.Plan {
	t.Helper()
	g, err := placement.SliceSpec{Accelerator: accel, Topology: topo, NumSlices: n}.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	return placement.NewSlicePlan("reserve-"+accel, g)
}

var (
	spot     = placement.Capacity{Class: placement.CapacitySpot}
	flex     = placement.Capacity{Class: placement.CapacityFlexStart}
	reserved = placement.Capacity{Class: placement.CapacityReservation, Reservation: "tpu-res"}
	shared   = placement.Capacity{Reservation: "tpu-res", ReservationProject: "acme-tpu-prod"}
)

// capacityCases are the objects of each capacity class whose manifests
// are golden files (testdata/capacity), the capacity set on the backend
// or on the plan, and the node selector and tolerations each TPU worker
// pod must carry beyond its TPU selectors.
func capacityCases(t *testing.T) map[string]struct {
	plan *placement.Plan
	opts kuberay.Options
	sel  map[string]string
	tol  []corev1.Toleration
} {
	spotTol := []corev1.Toleration{{Key: "cloud.google.com/gke-spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	return map[string]struct {
		plan *placement.Plan
		opts kuberay.Options
		sel  map[string]string
		tol  []corev1.Toleration
	}{
		"raycluster-v6e-4x4-spot": {slicePlanOf(t, "v6e", "4x4", 2), kuberay.Options{Capacity: spot},
			map[string]string{"cloud.google.com/gke-spot": "true"}, spotTol},
		"raycluster-v5p-2x2x2-shared-reservation": {slicePlanOf(t, "v5p", "2x2x2", 1), kuberay.Options{Capacity: shared},
			map[string]string{"cloud.google.com/reservation-name": "tpu-res", "cloud.google.com/reservation-affinity": "specific",
				"cloud.google.com/reservation-project": "acme-tpu-prod"}, nil},
		// The plan's own capacity, no backend option.
		"raycluster-v6e-2x4-flex-start": {withCapacity(slicePlanOf(t, "v6e", "2x4", 1), flex), kuberay.Options{},
			map[string]string{"cloud.google.com/gke-flex-start": "true"}, nil},
		// A RayService: every replica's slice group.
		"rayservice-chat-v4-reservation": {compileApp(t, chatApp(1, nil)), kuberay.Options{Capacity: reserved},
			map[string]string{"cloud.google.com/reservation-name": "tpu-res", "cloud.google.com/reservation-affinity": "specific"}, nil},
		// A RayJob: the plan's capacity equal to the backend's.
		"rayjob-v6e-4x4-spot": {withCapacity(compile(t, trainer("v6e", "4x4", 1)), spot), kuberay.Options{Capacity: spot},
			map[string]string{"cloud.google.com/gke-spot": "true"}, spotTol},
	}
}

// Every capacity class renders GKE's node selectors and tolerations on
// every TPU worker group and nothing on the CPU head; the manifests are
// byte-identical from run to run and KubeRay v1.5.0's own validation
// accepts them. RayJob manifests carry the launcher, so the RayJob is
// checked but not kept as a golden file.
func TestRenderCapacityGolden(t *testing.T) {
	t.Parallel()
	for name, c := range capacityCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			obj, err := kuberay.RenderPlan(c.plan, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			y, err := kuberay.MarshalYAML(obj)
			if err != nil {
				t.Fatal(err)
			}
			if c.plan.Kind.RunsToCompletion() {
				if _, ok := typed(t, y).(*rayv1.RayJob); !ok {
					t.Fatal("a job plan did not render a RayJob")
				}
			} else {
				golden.Assert(t, filepath.Join("capacity", name+".golden.yaml"), y)
			}
			again, err := kuberay.RenderPlan(c.plan, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if y2, _ := kuberay.MarshalYAML(again); string(y2) != string(y) {
				t.Error("two renders of one plan differ")
			}
			spec := kubeRayCheck(t, y)
			head := spec.HeadGroupSpec.Template.Spec
			if len(head.NodeSelector) > 0 || len(head.Tolerations) > 0 {
				t.Errorf("head pod: nodeSelector %v tolerations %v, want none (the CPU head takes no TPU capacity)", head.NodeSelector, head.Tolerations)
			}
			if len(spec.WorkerGroupSpecs) == 0 {
				t.Fatal("no worker groups")
			}
			for _, g := range spec.WorkerGroupSpecs {
				pod := g.Template.Spec
				want := maps.Clone(c.sel)
				want["cloud.google.com/gke-tpu-accelerator"] = pod.NodeSelector["cloud.google.com/gke-tpu-accelerator"]
				want["cloud.google.com/gke-tpu-topology"] = pod.NodeSelector["cloud.google.com/gke-tpu-topology"]
				if !maps.Equal(pod.NodeSelector, want) || want["cloud.google.com/gke-tpu-accelerator"] == "" {
					t.Errorf("group %s: nodeSelector %v, want the TPU selectors and %v", g.GroupName, pod.NodeSelector, c.sel)
				}
				if !slices.Equal(pod.Tolerations, c.tol) {
					t.Errorf("group %s: tolerations %v, want %v", g.GroupName, pod.Tolerations, c.tol)
				}
			}
		})
	}
}

// TPU hosts outside the plan's slice groups get the capacity too.
func TestRenderCapacityOnServeHosts(t *testing.T) {
	t.Parallel()
	app := serve.Application{Name: "embed", ImportPath: "embed:app", Deployments: []serve.Deployment{
		{Name: "Embed", AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e"},
			RayActorOptions: &serve.RayActorOptions{Resources: map[string]float64{"TPU": 4}}}}}
	svc, err := kuberay.RenderService(compileApp(t, app), kuberay.Options{Capacity: flex})
	if err != nil {
		t.Fatal(err)
	}
	groups := svc.Spec.RayClusterSpec.WorkerGroupSpecs
	if len(groups) == 0 {
		t.Fatal("no worker groups")
	}
	for _, g := range groups {
		if got := g.Template.Spec.NodeSelector["cloud.google.com/gke-flex-start"]; got != "true" {
			t.Errorf("group %s: nodeSelector %v, want cloud.google.com/gke-flex-start: \"true\"", *g.GroupName, g.Template.Spec.NodeSelector)
		}
	}
}

// On-demand, the default, renders no capacity selector: the manifests of
// every other golden test stay as they were.
func TestRenderOnDemandAddsNothing(t *testing.T) {
	t.Parallel()
	p := slicePlanOf(t, "v6e", "4x4", 1)
	plain, err := kuberay.RenderPlan(p, kuberay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	onDemand, err := kuberay.RenderPlan(p, kuberay.Options{Capacity: placement.Capacity{Class: placement.CapacityOnDemand}})
	if err != nil {
		t.Fatal(err)
	}
	y1, _ := kuberay.MarshalYAML(plain)
	y2, _ := kuberay.MarshalYAML(onDemand)
	if string(y1) != string(y2) {
		t.Errorf("on-demand changed the manifest:\n%s\nwant\n%s", y2, y1)
	}
}

// Every combination GKE refuses, and every malformed capacity, is refused
// by Render at its field path with its type; the options' own rules are
// refused by New as well (CheckOptions).
func TestCapacityRefusals(t *testing.T) {
	t.Parallel()
	v4 := func() *placement.Plan { return slicePlanOf(t, "v4", "2x2x2", 1) }
	v6e := func() *placement.Plan { return slicePlanOf(t, "v6e", "4x4", 1) }
	job := func() *placement.Plan { return compile(t, trainer("v6e", "4x4", 1)) }
	// TPU hosts of a deployment without a topology: no slice group of the
	// plan, still a TPU worker group of the RayService.
	hosts := func(accel string) *placement.Plan {
		return compileApp(t, serve.Application{Name: "embed", ImportPath: "embed:app", Deployments: []serve.Deployment{
			{Name: "Embed", AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: accel},
				RayActorOptions: &serve.RayActorOptions{Resources: map[string]float64{"TPU": 4}}}}})
	}
	type want struct {
		path string
		typ  field.Type
	}
	for _, c := range []struct {
		name    string
		plan    *placement.Plan
		opts    kuberay.Options
		want    []want
		option  bool     // also refused by New: a rule of the options alone
		invalid bool     // the plan itself is invalid (backend.ErrInvalidPlan)
		valid   []string // the valid values of a NotSupported error
	}{
		{"spot with a reservation", v6e(), kuberay.Options{Capacity: placement.Capacity{Class: placement.CapacitySpot, Reservation: "tpu-res"}},
			[]want{{"options.capacity.class", field.TypeNotSupported}}, true, false, []string{"reservation"}},
		{"flex-start with a reservation", v6e(), kuberay.Options{Capacity: placement.Capacity{Class: placement.CapacityFlexStart, Reservation: "tpu-res"}},
			[]want{{"options.capacity.class", field.TypeNotSupported}}, true, false, []string{"reservation"}},
		{"on-demand with a reservation project", v6e(), kuberay.Options{Capacity: placement.Capacity{Class: placement.CapacityOnDemand, ReservationProject: "acme-tpu-prod"}},
			[]want{{"options.capacity.class", field.TypeNotSupported}}, true, false, []string{"reservation"}},
		{"unknown class", v6e(), kuberay.Options{Capacity: placement.Capacity{Class: "spto"}},
			[]want{{"options.capacity.class", field.TypeNotSupported}}, true, false, []string{"on-demand", "spot", "reservation", "flex-start"}},
		{"reservation without a name", v6e(), kuberay.Options{Capacity: placement.Capacity{Class: placement.CapacityReservation}},
			[]want{{"options.capacity.reservation", field.TypeRequired}}, true, false, nil},
		{"reservation path instead of name", v6e(), kuberay.Options{Capacity: placement.Capacity{Reservation: "projects/acme/reservations/tpu-res"}},
			[]want{{"options.capacity.reservation", field.TypeInvalid}}, true, false, nil},
		{"bad reservation name and project", v6e(), kuberay.Options{Capacity: placement.Capacity{Reservation: "TPU_res", ReservationProject: "example.com:acme"}},
			[]want{{"options.capacity.reservation", field.TypeInvalid}, {"options.capacity.reservationProject", field.TypeInvalid}}, true, false, nil},
		{"flex-start on v4 from the options", v4(), kuberay.Options{Capacity: flex},
			[]want{{"plan.slices[0].generation", field.TypeNotSupported}}, false, false, []string{"v5e", "v5p", "v6e"}},
		{"flex-start on v4 in the plan", withCapacity(v4(), flex), kuberay.Options{},
			[]want{{"plan.slices[0].generation", field.TypeNotSupported}}, false, true, []string{"v5e", "v5p", "v6e"}},
		{"spot with a reservation in the plan", withCapacity(v6e(), placement.Capacity{Class: placement.CapacitySpot, Reservation: "tpu-res"}), kuberay.Options{},
			[]want{{"plan.capacity.class", field.TypeNotSupported}}, false, true, []string{"reservation"}},
		{"flex-start on v4 hosts of a Serve deployment", hosts("v4"), kuberay.Options{Capacity: flex},
			[]want{{"plan.serve.config.deployments[Embed].ray_actor_options.accelerator_type", field.TypeNotSupported}}, false, false, []string{"v5e", "v5p", "v6e"}},
		{"the plan's capacity against the backend's", withCapacity(v6e(), spot), kuberay.Options{Capacity: reserved},
			[]want{{"options.capacity", field.TypeInvalid}}, false, false, nil},
		{"capacity on an existing cluster", job(), kuberay.Options{Cluster: "tpu-pool", Capacity: spot},
			[]want{{"options.capacity", field.TypeForbidden}}, true, false, nil},
		{"the plan's capacity on an existing cluster", withCapacity(job(), spot), kuberay.Options{Cluster: "tpu-pool"},
			[]want{{"plan.capacity", field.TypeForbidden}}, false, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := kuberay.Render(c.plan, c.opts, kuberay.RenderInput{})
			errs := field.Errors(err)
			var got []want
			for _, e := range errs {
				got = append(got, want{e.Field, e.Type})
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Render: %v\ngot %v, want %v", err, got, c.want)
			}
			if c.valid != nil && !slices.Equal(errs[0].ValidValues, c.valid) {
				t.Errorf("valid values %v, want %v", errs[0].ValidValues, c.valid)
			}
			if errs[0].Type != field.TypeRequired && errs[0].Type != field.TypeForbidden && fmt.Sprint(errs[0].BadValue) == "" {
				t.Errorf("%s: no bad value", errs[0].Field)
			}
			if got := errors.Is(err, backend.ErrInvalidPlan); got != c.invalid {
				t.Errorf("errors.Is(err, ErrInvalidPlan) = %v, want %v", got, c.invalid)
			}
			if c.option != (kuberay.CheckOptions(c.opts) != nil) {
				t.Errorf("CheckOptions: %v; want an error: %v", kuberay.CheckOptions(c.opts), c.option)
			}
		})
	}
}
