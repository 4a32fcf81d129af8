package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serveconfig"
)

// TestTrapsAndHostileInput: no number means "auto", an empty accelerator
// config is refused, cycles and control characters are errors at the
// field, every one in the spelling of a Serve config file.
func TestTrapsAndHostileInput(t *testing.T) {
	t.Parallel()
	self := map[string]any{}
	self["self"] = self
	tooMany := ref("app.deployments[d].num_replicas", field.TypeTooMany)
	cases := []specCase{
		{name: "num_replicas -1 is not auto", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.ReplicaCount(-1) })),
			want: []field.Ref{ref("app.deployments[d].num_replicas", invalid)}},
		{name: "num_replicas 0", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.ReplicaCount(0) })),
			want: []field.Ref{ref("app.deployments[d].num_replicas", invalid)}},
		{name: "num_replicas too many", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.ReplicaCount(1 << 40) })),
			want: []field.Ref{tooMany}},
		{name: "num_replicas auto", app: one(d(func(d *Deployment) { d.NumReplicas = serveconfig.AutoReplicas() }))},
		{name: "max_queued_requests 0", app: one(d(func(d *Deployment) { d.MaxQueuedRequests = serveconfig.MaxQueued(0) })),
			want: []field.Ref{ref("app.deployments[d].max_queued_requests", invalid)}},
		{name: "max_queued_requests -1 is not no limit", app: one(d(func(d *Deployment) { d.MaxQueuedRequests = serveconfig.MaxQueued(-1) })),
			want: []field.Ref{ref("app.deployments[d].max_queued_requests", invalid)}},
		{name: "no queue limit", app: one(d(func(d *Deployment) { d.MaxQueuedRequests = serveconfig.NoQueueLimit() }))},
		{name: "empty accelerator config", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{} })),
			want: []field.Ref{ref("app.deployments[d].accelerator_config.accelerator_type", required)}},
		{name: "kind only accelerator config", app: one(d(func(d *Deployment) { d.AcceleratorConfig = &AcceleratorConfig{Kind: TPU} })),
			want: []field.Ref{ref("app.deployments[d].accelerator_config.accelerator_type", required)}},
		{name: "user_config holds itself", app: one(d(func(d *Deployment) { d.UserConfig = self })),
			want: []field.Ref{ref("app.deployments[d].user_config[self]", invalid)}},
		{name: "args hold themselves", app: Application{ImportPath: "a:b", Args: map[string]any{"cfg": self}},
			want: []field.Ref{ref("app.args[cfg][self]", invalid)}},
		{name: "runtime_env value holds itself", app: Application{ImportPath: "a:b", RuntimeEnv: runtimeenv.RuntimeEnv{Extra: map[string]any{"conda": self}}},
			want: []field.Ref{ref("app.runtime_env.conda[self]", invalid)}},
		{name: "app name with control characters", app: Application{Name: "a\x07\x1b[2J\x00", ImportPath: "a:b"},
			want: []field.Ref{ref("app.name", invalid)}},
		{name: "app name with a newline", app: Application{Name: "a\nb", ImportPath: "a:b"},
			want: []field.Ref{ref("app.name", invalid)}},
		{name: "app name climbing", app: Application{Name: "a/../../b", ImportPath: "a:b"},
			want: []field.Ref{ref("app.name", invalid)}},
		{name: "deployment name with ESC", app: one(Deployment{Name: "d\x1b"}),
			want: []field.Ref{ref("app.deployments[d\x1b].name", invalid)}},
		{name: "deployment name climbing", app: one(Deployment{Name: "../d"}),
			want: []field.Ref{ref("app.deployments[../d].name", invalid)}},
		{name: "route prefix climbing", app: Application{ImportPath: "a:b", RoutePrefix: "/a/../b"},
			want: []field.Ref{ref("app.route_prefix", invalid)}},
		{name: "route prefix with NUL", app: Application{ImportPath: "a:b", RoutePrefix: "/a\x00"},
			want: []field.Ref{ref("app.route_prefix", invalid)}},
		{name: "import path with a newline", app: Application{ImportPath: "a:b\n"},
			want: []field.Ref{ref("app.import_path", invalid)}},
		{name: "working_dir with BEL", app: Application{ImportPath: "a:b", RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "gs://b/\x07"}},
			want: []field.Ref{ref("app.runtime_env.working_dir", invalid)}},
		{name: "negative head reservation timeout", app: one(d(func(d *Deployment) {
			d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", HeadReservationTimeout: -time.Second}
		})), want: []field.Ref{ref("app.deployments[d].accelerator_config.head_reservation_timeout_s", invalid)}},
		{name: "no head reservation timeout", app: one(d(func(d *Deployment) {
			d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", NoHeadReservationTimeout: true}
		}))},
		{name: "both head reservation timeouts", app: one(d(func(d *Deployment) {
			d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", HeadReservationTimeout: time.Second, NoHeadReservationTimeout: true}
		})), want: []field.Ref{ref("app.deployments[d].accelerator_config.head_reservation_timeout_s", forbidden)}},
		{name: "runtime_env env_vars in the file's spelling", app: Application{ImportPath: "a:b", RuntimeEnv: runtimeenv.RuntimeEnv{EnvVars: map[string]string{"1=BAD": "x"}}},
			want: []field.Ref{ref("app.runtime_env.env_vars[1=BAD]", invalid)}},
		{name: "ray_actor_options accelerator_type with ESC", app: one(d(func(d *Deployment) { d.RayActorOptions = &RayActorOptions{AcceleratorType: "TPU\x1b"} })),
			want: []field.Ref{ref("app.deployments[d].ray_actor_options.accelerator_type", invalid)}},
		{name: "nil actor options are fine", app: one(d(func(d *Deployment) { d.RayActorOptions = &RayActorOptions{} }))},
	}
	for _, c := range cases {
		_, err := c.app.Compile()
		got := field.Refs(err)
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s\n%v", c.name, diff, err)
		}
		if err != nil && strings.Contains(err.Error(), "map[string]interface") {
			t.Errorf("%s: the message prints a Go map: %v", c.name, err)
		}
	}
}

// TestReplicasOnTheWire: a count and "auto" are what Ray reads, unset
// leaves the key out, and a file's "auto" or count decodes to them.
func TestReplicasOnTheWire(t *testing.T) {
	t.Parallel()
	app := Application{Name: "a", ImportPath: "a:b", Deployments: []Deployment{
		{Name: "count", NumReplicas: serveconfig.ReplicaCount(3), MaxQueuedRequests: serveconfig.MaxQueued(7)},
		{Name: "auto", NumReplicas: serveconfig.AutoReplicas(), MaxQueuedRequests: serveconfig.NoQueueLimit()},
		{Name: "unset"},
	}}
	plan, err := app.Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan.Serve.Config.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `"deployments":[{"name":"count","num_replicas":3,"max_queued_requests":7},{"name":"auto","num_replicas":"auto","max_queued_requests":-1},{"name":"unset"}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("config %s\nwant it to hold %s", b, want)
	}
	var back serveconfig.Application
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if r := back.Deployments[1].NumReplicas; !r.IsAuto() || !back.Deployments[1].MaxQueuedRequests.IsUnlimited() {
		t.Errorf("decoded auto deployment: %v %v", r, back.Deployments[1].MaxQueuedRequests)
	}
	if n, ok := back.Deployments[0].NumReplicas.Count(); !ok || n != 3 || !back.Deployments[2].NumReplicas.IsZero() {
		t.Errorf("decoded counts: %v, %v", back.Deployments[0].NumReplicas, back.Deployments[2].NumReplicas)
	}

	// A file spells them as Ray does; -1 is a count there, refused by Compile.
	for _, c := range []struct {
		yaml string
		want []field.Ref
	}{
		{"import_path: a:b\ndeployments:\n- name: d\n  num_replicas: auto\n  max_queued_requests: -1\n", nil},
		{"import_path: a:b\ndeployments:\n- name: d\n  num_replicas: 2\n", nil},
		{"import_path: a:b\ndeployments:\n- name: d\n  num_replicas: -1\n", []field.Ref{ref("app.deployments[d].num_replicas", invalid)}},
		{"import_path: a:b\ndeployments:\n- name: d\n  max_queued_requests: 0\n", []field.Ref{ref("app.deployments[d].max_queued_requests", invalid)}},
	} {
		var a Application
		if errs := fieldfile.Decode([]byte(c.yaml), appPath, &a); len(errs) > 0 {
			t.Errorf("%q: decode: %v", c.yaml, errs)
			continue
		}
		_, err := a.Compile()
		if diff := cmp.Diff(c.want, field.Refs(err), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: (-want +got):\n%s", c.yaml, diff)
		}
	}
	var a Application
	errs := fieldfile.Decode([]byte("import_path: a:b\ndeployments:\n- name: d\n  num_replicas: lots\n"), appPath, &a)
	if got := field.Refs(errs.Err()); len(got) != 1 || got[0].Field != "app.deployments[0].num_replicas" {
		t.Errorf("num_replicas: lots: %v", errs)
	}
}

// TestEntryPointsAreTotal: nil, typed-nil and zero inputs to the package's
// functions and methods are errors, never panics.
func TestEntryPointsAreTotal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var nilCtx context.Context
	var typedNil backend.Server = (*nilServer)(nil)
	var nilApp *Application
	good := Application{ImportPath: "a:b"}
	calls := map[string]func() error{
		"DeployApp nil ctx":       func() error { _, err := DeployApp(nilCtx, fakeServer{}, good); return err },
		"DeployApp nil backend":   func() error { _, err := DeployApp(ctx, nil, good); return err },
		"DeployApp typed nil":     func() error { _, err := DeployApp(ctx, typedNil, good); return err },
		"DeployApp nil app":       func() error { _, err := DeployApp(ctx, fakeServer{}, nil); return err },
		"DeployApp typed nil app": func() error { _, err := DeployApp(ctx, fakeServer{}, nilApp); return err },
		"RunApp nil backend":      func() error { _, err := RunApp(ctx, nil, good, nil); return err },
		"Run typed nil":           func() error { _, err := good.Run(ctx, typedNil, nil); return err },
		"Deploy nil":              func() error { _, err := good.Deploy(ctx, nil); return err },
		"Delete nil":              func() error { return Delete(ctx, nil, "a") },
		"Delete typed nil":        func() error { return Delete(ctx, typedNil, "a") },
		"Delete empty name":       func() error { return Delete(ctx, fakeServer{}, "") },
		"Delete nil ctx":          func() error { return Delete(nilCtx, fakeServer{}, "a") },
		"Compile zero":            func() error { _, err := Application{}.Compile(); return err },
		"GRPCOptions zero":        func() error { _, err := GRPCOptions{}.Compile(); return err },
		"GRPCOptions negative": func() error {
			_, err := GRPCOptions{Port: -1, ServicerFunctions: []string{"a.b"}}.Compile()
			return err
		},
		"AcceleratorConfig nil": func() error { return (*AcceleratorConfig)(nil).UnmarshalJSON([]byte(`{}`)) },
	}
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
	if n := (*Deployment)(nil).MaxReplicas(); n != 0 {
		t.Errorf("nil deployment: MaxReplicas %d", n)
	}
	// A nil options value is the defaults: the wait is reached.
	if _, err := RunApp(ctx, fakeServer{}, good, nil); !errors.Is(err, errWaited) {
		t.Errorf("RunApp with nil options: %v, want the backend's wait", err)
	}
}

var errWaited = errors.New("waited")

// fakeServer accepts every deploy and answers a wait with errWaited.
type fakeServer struct{ backend.Server }

func (fakeServer) Deploy(context.Context, *placement.Plan) (*backend.ServiceStatus, error) {
	return &backend.ServiceStatus{Name: "a"}, nil
}

func (fakeServer) Wait(context.Context, string, backend.WaitOptions) (*backend.ServiceStatus, error) {
	return nil, errWaited
}

func (fakeServer) Delete(context.Context, string) error { return nil }

// nilServer is a backend whose methods would dereference a nil receiver.
type nilServer struct {
	backend.Server
	n int
}

// TestNoHeadReservationTimeout: waiting indefinitely reaches the slice
// group and the reservation as placement spells it, a timeout of 0
// seconds (the replica runtime hands Ray None).
func TestNoHeadReservationTimeout(t *testing.T) {
	t.Parallel()
	plan, err := one(d(func(d *Deployment) {
		d.AcceleratorConfig = &AcceleratorConfig{Accelerator: "v4", Topology: "2x2x2", NoHeadReservationTimeout: true}
	})).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Slices[0].HeadReservationTimeoutSeconds; s != 0 {
		t.Errorf("slice group timeout %v, want 0 (indefinitely)", s)
	}
	if r := plan.Serve.Config.Deployments[0].Reservation; r == nil || r.HeadReservationTimeoutS != 0 {
		t.Errorf("reservation %+v, want timeout 0 (indefinitely)", r)
	}
}
