package backendtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// checkStatus checks a status the Server returned for application name.
func checkStatus(t reporter, b *Backend, what, name string, st *backend.ServiceStatus, err error) {
	t.Helper()
	if err != nil || st == nil {
		t.Fatalf("%s(%s) = %+v, %v; want the application's status", what, name, st, err)
	}
	if st.Backend != b.Name || st.Name != name || st.State == "" {
		t.Errorf("%s(%s) = status of backend %q, name %q, state %q; want backend %q, name %q and a state", what, name, st.Backend, st.Name, st.State, b.Name, name)
	}
}

// waitRunning checks Wait on a deployed application: RUNNING (SIMULATED),
// or on a control plane only, a *ServiceError once the context ends.
func waitRunning(t reporter, b *Backend, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), b.Patience)
	defer cancel()
	var mu sync.Mutex
	var seen []*backend.ServiceStatus
	st, err := b.Server.Wait(ctx, name, backend.WaitOptions{OnStatus: func(s *backend.ServiceStatus) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s)
	}})
	mu.Lock()
	defer mu.Unlock()
	if b.ControlPlaneOnly {
		var se *backend.ServiceError
		if !errors.As(err, &se) || se.Status == nil || se.Status.Name != name || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait(%s) = %+v, %v; with nothing running in the cluster, want a *backend.ServiceError holding the last status once the context ends", name, st, err)
		}
		return
	}
	checkStatus(t, b, "Wait", name, st, err)
	if st.State != backend.ServiceRunning && st.State != backend.ServiceSimulated {
		t.Errorf("Wait(%s) = state %s; want RUNNING (or SIMULATED)", name, st.State)
	}
	if len(seen) == 0 || seen[len(seen)-1].State != st.State {
		t.Errorf("Wait(%s): WaitOptions.OnStatus saw %d statuses; want at least one, the last in the state Wait returned", name, len(seen))
	}
}

// gone polls Status until the application is ErrNotFound: Delete may
// return while the backend still removes it (DELETING).
func gone(t reporter, b *Backend, name string) {
	t.Helper()
	deadline := time.Now().Add(b.Patience)
	for {
		st, err := b.Server.Status(t.Context(), name)
		switch {
		case errors.Is(err, backend.ErrNotFound):
			return
		case err != nil:
			t.Fatalf("Status(%s) after Delete = %v; want a status while it goes, then backend.ErrNotFound", name, err)
		case time.Now().After(deadline):
			t.Fatalf("Status(%s) = %s %v after Delete; want backend.ErrNotFound within %v", name, st.State, st.Message, b.Patience)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deployFollowDelete: Deploy, a second Deploy of the same plan, Status and
// Wait; Delete removes one application and leaves the other; a second
// Delete is ErrNotFound.
func deployFollowDelete(t reporter, b *Backend, n namer) {
	one, two := n.name("one"), n.name("two")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, name := range []string{one, two} {
			b.Server.Delete(ctx, name)
		}
	})
	st, err := b.Server.Deploy(t.Context(), b.AppPlan(one))
	checkStatus(t, b, "Deploy", one, st, err)
	st, err = b.Server.Deploy(t.Context(), b.AppPlan(one))
	checkStatus(t, b, "second Deploy", one, st, err)
	st, err = b.Server.Status(t.Context(), one)
	checkStatus(t, b, "Status", one, st, err)
	waitRunning(t, b, one)

	st, err = b.Server.Deploy(t.Context(), b.AppPlan(two))
	checkStatus(t, b, "Deploy", two, st, err)
	if err := b.Server.Delete(t.Context(), one); err != nil {
		t.Fatalf("Delete(%s) = %v", one, err)
	}
	gone(t, b, one)
	st, err = b.Server.Status(t.Context(), two)
	checkStatus(t, b, "Status (after deleting another application)", two, st, err)
	if st.State == backend.ServiceDeleting {
		t.Errorf("Status(%s) = DELETING after Delete(%s); deleting one application leaves the others", two, one)
	}
	if err := b.Server.Delete(t.Context(), one); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second Delete(%s) = %v; want backend.ErrNotFound", one, err)
	}
	if err := b.Server.Delete(t.Context(), two); err != nil {
		t.Errorf("Delete(%s) = %v", two, err)
	}
}

// unknownNames: Status, Wait and Delete of a name never deployed are
// ErrNotFound.
func unknownNames(t reporter, b *Backend, n namer) {
	name := n.name("never")
	if st, err := b.Server.Status(t.Context(), name); !errors.Is(err, backend.ErrNotFound) || st != nil {
		t.Errorf("Status(%s) = %+v, %v; want no status and backend.ErrNotFound", name, st, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), b.Patience)
	defer cancel()
	if _, err := b.Server.Wait(ctx, name, backend.WaitOptions{}); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Wait(%s) = %v; want backend.ErrNotFound", name, err)
	}
	if err := b.Server.Delete(t.Context(), name); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Delete(%s) = %v; want backend.ErrNotFound", name, err)
	}
}

// serverRefuses: invalid plans are ErrInvalidPlan and plans that are not
// applications ErrUnsupported, each before anything is deployed.
func serverRefuses(t reporter, b *Backend, n namer) {
	check := func(what string, p *placement.Plan, want error, ref field.Ref) {
		st, err := b.Server.Deploy(t.Context(), p)
		if !refused(t, "Deploy of "+what, st != nil, err, want, ref) || p == nil || p.Name == "" {
			return
		}
		if _, err := b.Server.Status(t.Context(), p.Name); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("Status(%s) after the refused Deploy of %s = %v; want backend.ErrNotFound: nothing deployed", p.Name, what, err)
		}
	}
	for _, c := range invalidPlans(placement.KindApplication, b.AppPlan, n.name) {
		check(c.what, c.plan, backend.ErrInvalidPlan, c.want)
	}
	for _, k := range placement.Kinds() {
		if k != placement.KindApplication {
			check("a plan of kind "+string(k), planOf(b, n.name("u-"+kindTag(k)), k), backend.ErrUnsupported, field.Ref{})
		}
	}
}

// serverContextDone: a Deploy whose context has ended returns the
// context's error and deploys nothing.
func serverContextDone(t reporter, b *Backend, n namer) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	name := n.name("ctx")
	if st, err := b.Server.Deploy(ctx, b.AppPlan(name)); !errors.Is(err, context.Canceled) || st != nil {
		t.Errorf("Deploy with a canceled context = %+v, %v; want no status and an error matching context.Canceled", st, err)
	}
	if _, err := b.Server.Status(t.Context(), name); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Status(%s) after a Deploy with a canceled context = %v; want backend.ErrNotFound", name, err)
	}
}
