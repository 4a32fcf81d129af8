package raybackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
)

// errStuck is the cause Wait's own context ends with when watchStuck found
// the application stuck.
var errStuck = errors.New("raybackend: application stuck")

// watchStuck waits until the application has been DEPLOYING for after,
// then diagnoses it on every poll until the diagnosis finds it stuck (an
// error, or a pending placement group) and returns its status with the
// diagnosis; nil when ctx ends first.
func (b *Backend) watchStuck(ctx context.Context, name string, after time.Duration) *backend.ServiceStatus {
	t := time.NewTimer(after)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	for {
		d, err := b.client.ServeApplications(ctx)
		if a, ok := d.Applications[name]; err == nil && ok && a.Status == ray.ServeAppDeploying {
			landings, diag, err := b.diagnose(ctx, a)
			if err == nil && isStuck(diag) {
				st := serviceStatus(a)
				st.Message = strings.TrimSpace(strings.Join(appMessages(a), "\n"))
				st.Landings, st.Diagnosis = landings, diag
				return st
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(max(b.poll, time.Second)):
		}
	}
}

func isStuck(d placement.Diagnosis) bool {
	return d.HasErrors() || slices.ContainsFunc(d, func(f placement.Finding) bool { return f.Code == placement.CodePending })
}

// appMessages lists the application's message and those of its
// deployments that are not HEALTHY, as Ray's wait error does.
func appMessages(a ray.ApplicationDetails) []string {
	var msgs []string
	if m := strings.TrimSpace(a.Message); m != "" {
		msgs = append(msgs, m)
	}
	for _, dn := range slices.Sorted(maps.Keys(a.Deployments)) {
		dep := a.Deployments[dn]
		if dep.Status != ray.ServeDeploymentHealthy && strings.TrimSpace(dep.Message) != "" {
			msgs = append(msgs, fmt.Sprintf("deployment %q is %s: %s", dn, dep.Status, strings.TrimSpace(dep.Message)))
		}
	}
	return msgs
}
